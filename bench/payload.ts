/**
 * The answer the bench's baselines give (bench/raw-server.ts, bench/effect-server.ts): what fos answered to one
 * request, as bench/run.ts wrote it to the JSON file named by `BENCH_PAYLOAD`.
 */
import { readFileSync } from "node:fs"

export interface Payload {
  readonly status: number
  /** Header name/value pairs as fos sent them, minus the ones Node writes itself (date, connection, keep-alive). */
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: string
}

/** The payload, or exit 2 with a line on stderr naming `server` when BENCH_PAYLOAD is not set. */
export const readPayload = (server: string): Payload => {
  const path = process.env.BENCH_PAYLOAD
  if (path === undefined) {
    console.error(`${server}: set BENCH_PAYLOAD to the JSON file written by bench/run.ts`)
    process.exit(2)
  }
  return JSON.parse(readFileSync(path, "utf8")) as Payload
}
