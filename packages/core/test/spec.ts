/**
 * The facts of the spec that the tests hold the code to, as the project's own data: spec-facts.json, checked in, so
 * a fresh clone runs every test with nothing beside it. They are the spec's endpoint tables, its event names, its
 * error codes with their statuses, its limits and the enumerations it spells out in prose.
 *
 * Where the spec's text is present (`FOS_SPEC`, or `shared/spec/financial-operations-api-v2.md` in a folder above
 * this one, as in CI), `readSpecFacts` reads the same facts from it and SpecFacts.test.ts compares them with the
 * file, so the data cannot drift from the spec; elsewhere that one comparison is skipped, and says so.
 * `node packages/core/test/spec.ts` rewrites the file from the spec's text.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const specRelative = path.join("shared", "spec", "financial-operations-api-v2.md")

/** Where the spec's text is: `FOS_SPEC`, or beside the repository; undefined when neither. */
export const specPath: string | undefined = (() => {
  const override = process.env.FOS_SPEC
  if (override !== undefined && override !== "") return override
  let dir = import.meta.dirname
  for (;;) {
    const candidate = path.join(dir, specRelative)
    if (existsSync(candidate)) return candidate
    const parent = path.dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
})()

/** The whole spec, as markdown, when it is present. */
export const specText: string | undefined = specPath === undefined ? undefined : readFileSync(specPath, "utf8")

/** The one line said where the comparison with the spec's text is skipped. */
export const specAbsent = `the spec's text is not here (no FOS_SPEC, no ${specRelative} above the repository): spec-facts.json is not compared with it`

export interface SpecEndpoint {
  /** The spec's table: "Webhook management" or "Other endpoints that are named". */
  readonly table: string
  readonly method: string
  /** With its `/v2` prefix. */
  readonly path: string
}

export interface SpecLimits {
  readonly rate: {
    readonly live: { readonly perSecond: number; readonly burst: number }
    readonly sandbox: { readonly perSecond: number; readonly burst: number }
    readonly dedicated: { readonly perSecond: number; readonly burst: number }
  }
  readonly pageSize: { readonly min: number; readonly max: number; readonly default: number }
  readonly idempotencyRetentionDays: number
  readonly webhookAttemptsPerRun: number
  readonly webhookRetryWaitsSeconds: ReadonlyArray<number>
  readonly signatureAgeSeconds: number
  readonly rotationGraceHours: number
}

export interface SpecFacts {
  /** The prefixes of the Identifiers table. */
  readonly identifierPrefixes: ReadonlyArray<string>
  readonly assetCodes: ReadonlyArray<string>
  readonly chains: ReadonlyArray<string>
  /** The rows of the two endpoint tables, in the spec's order. */
  readonly endpoints: ReadonlyArray<SpecEndpoint>
  /** The Events table's names, in its order (`a, b` and `x.promoted / demoted` spelled out). */
  readonly events: ReadonlyArray<string>
  /** Versioning 5's deprecated event types. */
  readonly deprecatedEvents: ReadonlyArray<string>
  /** The status events of "Ordering of transaction status events", rule 1. */
  readonly transactionStatusEvents: ReadonlyArray<string>
  /** The Synchronous codes table: code -> HTTP status, in its order. */
  readonly errorCodes: Readonly<Record<string, number>>
  /** The codes the prose below that table names without a status. */
  readonly errorCodesWithoutStatus: ReadonlyArray<string>
  /** Enumerations the spec spells out in the Events table's cells and in the resources' prose, in its order. */
  readonly enumerations: {
    readonly orderFailureReasonCodes: ReadonlyArray<string>
    readonly orderCancelledReasons: ReadonlyArray<string>
    readonly signingModes: ReadonlyArray<string>
    readonly applicationFailureCodes: ReadonlyArray<string>
    readonly walletSignerRemovedReasons: ReadonlyArray<string>
    readonly walletCeremonyFailedStatuses: ReadonlyArray<string>
    readonly railFamilies: ReadonlyArray<string>
    readonly transactionTypes: ReadonlyArray<string>
    readonly transactionStages: ReadonlyArray<string>
    readonly transactionSides: ReadonlyArray<string>
    readonly applicationTypes: ReadonlyArray<string>
    /** "Terminal failure codes (failureCode)", sorted. */
    readonly transactionFailureCodes: ReadonlyArray<string>
  }
  readonly limits: SpecLimits
}

/** Where the checked-in facts are. */
export const specFactsPath: string = fileURLToPath(new URL("./spec-facts.json", import.meta.url))

/** The checked-in facts (read lazily, so the generator below runs without the file). */
let loaded: SpecFacts | undefined
export const specFacts = (): SpecFacts => (loaded ??= JSON.parse(readFileSync(specFactsPath, "utf8")) as SpecFacts)

// --- reading the facts from the spec's text ------------------------------------------------------------------------

/** The lines of one section (`### heading` or `## heading`), up to the next heading of level 3 or above. */
export const section = (heading: string, markdown: string): Array<string> => {
  const lines = markdown.split(/\r?\n/)
  const start = lines.findIndex((l) => l.trim() === heading)
  if (start < 0) throw new Error(`section ${heading} not found in the spec`)
  const rest = lines.slice(start + 1)
  const end = rest.findIndex((l) => /^#{1,3} /.test(l))
  return end < 0 ? rest : rest.slice(0, end)
}

/** The cells of a markdown table row, trimmed, without the outer pipes. */
const cells = (row: string): Array<string> => row.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim())

/** The data rows of the table in `lines`, after checking that its header starts with `header`. */
const tableRows = (lines: ReadonlyArray<string>, header: ReadonlyArray<string>): Array<Array<string>> => {
  const rows = lines.filter((l) => l.trim().startsWith("|"))
  const got = cells(rows[0] ?? "")
  if (got.slice(0, header.length).join("|") !== header.join("|")) throw new Error(`table header ${got.join(" | ")} is not ${header.join(" | ")}`)
  if (!/^\|(\s*:?-+:?\s*\|)+$/.test(rows[1] ?? "")) throw new Error(`no separator row under ${header.join(" | ")}`)
  return rows.slice(2).map(cells)
}

/** The first capture of `re` in `text`; throws when there is none. */
const capture = (text: string, re: RegExp): string => {
  const m = re.exec(text)
  if (m === null || m[1] === undefined) throw new Error(`${re} not found in the spec`)
  return m[1]
}

/** "a, b (note), c" or "a or b" -> ["a", "b", "c"]. */
const words = (list: string): Array<string> =>
  list.replace(/\([^)]*\)/g, "").split(/,|\bor\b/).map((w) => w.trim().replace(/\.$/, "").trim()).filter((w) => w !== "")

const number = (text: string, re: RegExp): number => Number(capture(text, re))

/** Every fact of `SpecFacts`, read from the spec's markdown; throws when the text is not shaped as expected. */
export const readSpecFacts = (markdown: string): SpecFacts => {
  const identifierPrefixes = [...new Set(
    section("### Identifiers", markdown).flatMap((l) => {
      const m = /^\| ([a-z]{3}) \| (.+?) \|$/.exec(l)
      return m === null ? [] : [m[1]!]
    })
  )].sort()

  const endpoints = ["Webhook management", "Other endpoints that are named"].flatMap((table) =>
    tableRows(section(`### ${table}`, markdown), ["Method", "Path"]).map(([method, p]) => ({ table, method: method!, path: `/v2${p}` }))
  )

  const notable = new Map<string, string>()
  for (const [names, , fields] of tableRows(section("### Events", markdown), ["Event", "Fired when", "Notable payload fields"])) {
    for (const part of names!.split(",").map((p) => p.trim())) {
      // "wallet_signer.promoted / demoted": the later names share the first one's resource.
      const [first, ...more] = part.split("/").map((p) => p.trim())
      const resource = first!.slice(0, first!.lastIndexOf(".") + 1)
      for (const name of [first!, ...more.map((m) => resource + m)]) {
        if (!/^[a-z_]+\.[a-z_]+$/.test(name)) throw new Error(`event name ${name} in the Events table`)
        if (notable.has(name)) throw new Error(`${name} listed twice in the Events table`)
        notable.set(name, fields ?? "")
      }
    }
  }
  const cell = (type: string) => notable.get(type) ?? ""

  const errorCodes: Record<string, number> = {}
  const synchronous = section("### Synchronous codes", markdown)
  for (const [status, codes] of tableRows(synchronous, ["HTTP", "Code", "Condition"])) {
    if (!/^\d{3}$/.test(status!)) throw new Error(`status ${status} in the Synchronous codes table`)
    for (const code of codes!.split(",").map((c) => c.trim())) {
      if (!/^[A-Z][A-Z0-9_]*$/.test(code)) throw new Error(`code ${code} in the Synchronous codes table`)
      if (code in errorCodes) throw new Error(`${code} listed twice`)
      errorCodes[code] = Number(status)
    }
  }
  const withoutStatus = capture(synchronous.join("\n"), /^HTTP status of (.+?): not shown/m)
    .split(/,|\band\b/).map((c) => c.trim()).filter((c) => c !== "")

  const versioning = section("## Versioning", markdown).join("\n")
  const ordering = section("### Ordering of transaction status events", markdown).find((l) => l.startsWith("1.")) ?? ""
  const transaction = section("### Transaction", markdown).join("\n")
  const application = section("### Application", markdown).join("\n")
  const terminal = section("### Terminal failure codes (failureCode)", markdown).join(" ")

  const limits = tableRows(section("## Limits", markdown), ["Limit", "Value", "Applies to"])
  const limit = (name: string): string => {
    const row = limits.find(([n]) => n === name)
    if (row === undefined) throw new Error(`no ${name} row in the Limits table`)
    return row[1]!
  }
  const waits = capture(limit("Webhook attempts"), /waits (.+)$/).split(",").map((w) => {
    const [, n, unit] = /^(\d+) (s|min|h)$/.exec(w.trim()) ?? []
    if (n === undefined) throw new Error(`webhook wait ${w}`)
    return Number(n) * (unit === "s" ? 1 : unit === "min" ? 60 : 3600)
  })
  const dedicated = limit("Dedicated bucket")

  return {
    identifierPrefixes,
    assetCodes: capture(markdown, /Asset code values: ([^\n]+?)\.\n/).split(", "),
    chains: capture(markdown, /Chain values: ([^\n]+?)\. /).split(", "),
    endpoints,
    events: [...notable.keys()],
    deprecatedEvents: [capture(versioning, /event ([a-z_]+\.[a-z_]+) \(replaced by/)],
    transactionStatusEvents: capture(ordering, /status events (.+?) carry sequence/).split(",").map((s) => s.trim())
      .map((s) => (s.startsWith(".") ? `transaction${s}` : s)),
    errorCodes,
    errorCodesWithoutStatus: withoutStatus,
    enumerations: {
      orderFailureReasonCodes: words(capture(cell("order.failed"), /reasonCode: ([^;]+);/)),
      orderCancelledReasons: words(capture(cell("order.cancelled"), /reason \(([^)]+)\)/)),
      signingModes: words(capture(cell("transaction.awaiting_signature"), /signingMode \(([^)]+)\)/)),
      applicationFailureCodes: words(capture(cell("application.rejected"), /failureCode \(([^)]+)\)/)),
      walletSignerRemovedReasons: words(capture(cell("wallet_signer.removed"), /reason \(([^)]+)\)/)),
      walletCeremonyFailedStatuses: words(capture(cell("wallet_ceremony.failed"), /status \(([^)]+)\)/)),
      railFamilies: words(capture(cell("virtual_account.activated"), /rail family \(([^)]+)\)/)),
      transactionTypes: words(capture(transaction, /- type values: (.+)/)),
      transactionStages: words(capture(transaction, /Values named: ([^.]+)\./)),
      transactionSides: words(capture(transaction, /discriminated by type: ([^.]+)\./)),
      applicationTypes: words(capture(application, /applicationType values: (.+)/)),
      transactionFailureCodes: [...new Set(terminal.match(/\b[a-z]+(?:_[a-z]+)+\b/g))].sort()
    },
    limits: {
      rate: {
        live: { perSecond: number(limit("Sustained rate, live key"), /^(\d+) requests per second/), burst: number(limit("Burst, live key"), /^(\d+)$/) },
        sandbox: {
          perSecond: number(limit("Sustained rate, sandbox key"), /^(\d+) requests per second/),
          burst: number(limit("Burst, sandbox key"), /^(\d+)$/)
        },
        dedicated: { perSecond: number(dedicated, /^(\d+) requests per second/), burst: number(dedicated, /burst (\d+)/) }
      },
      pageSize: {
        min: number(limit("Page size"), /^(\d+) to/),
        max: number(limit("Page size"), /to (\d+),/),
        default: number(limit("Page size"), /default (\d+)/)
      },
      idempotencyRetentionDays: number(limit("Idempotency retention"), /^(\d+) days/),
      webhookAttemptsPerRun: number(limit("Webhook attempts"), /^(\d+) per run/),
      webhookRetryWaitsSeconds: waits,
      signatureAgeSeconds: number(limit("Signature age"), /older than (\d+) seconds/),
      rotationGraceHours: number(limit("Rotation grace period"), /(\d+) hours/)
    }
  }
}

/** `node packages/core/test/spec.ts`: rewrites spec-facts.json from the spec's text. */
if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (specText === undefined) throw new Error(specAbsent)
  writeFileSync(specFactsPath, `${JSON.stringify(readSpecFacts(specText), null, 2)}\n`)
  console.log(`wrote ${path.relative(process.cwd(), specFactsPath)} from ${specPath}`)
}
