/** The types of parse-prometheus-text-format, which ships none: its output follows prom2json's. */
declare module "parse-prometheus-text-format" {
  interface ParsedSample {
    readonly labels?: Record<string, string>
    readonly value?: string
    readonly buckets?: Record<string, string>
    readonly count?: string
    readonly sum?: string
  }
  interface ParsedFamily {
    readonly name: string
    readonly help: string
    readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED"
    readonly metrics: ReadonlyArray<ParsedSample>
  }
  const parsePrometheusTextFormat: (text: string) => ReadonlyArray<ParsedFamily>
  export default parsePrometheusTextFormat
}
