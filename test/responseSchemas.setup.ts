/**
 * A setup file of every test file (vitest.config.ts): records the answers the file's requests get through the test
 * helpers (responseRecorder.ts) and, after its tests, checks each against its operation's declared responses in
 * the served OpenAPI document (responseSchemas.ts). A file that recorded nothing pays nothing; one whose answers
 * break their schemas fails, each finding named.
 *
 * `FOS_RESPONSE_SCHEMAS=off` turns recording and the check off (to bisect); `=report` prints each file's counts.
 * `FOS_RESPONSE_RECORDS=<file>` also appends every recorded answer to that file, one JSON line each (to read
 * what the suites really got, for instance when writing an example for Examples.ts).
 */
import { appendFileSync } from "node:fs"
import { afterAll, expect } from "vitest"
import { startRecording, takeRecorded } from "./responseRecorder.ts"

if (process.env.FOS_RESPONSE_SCHEMAS !== "off") {
  startRecording()
  afterAll(async () => {
    const answers = await takeRecorded()
    if (answers.length === 0) return
    const file = process.env.FOS_RESPONSE_RECORDS
    if (file !== undefined && file !== "") appendFileSync(file, answers.map((a) => JSON.stringify(a) + "\n").join(""))
    const { checkResponses } = await import("./responseSchemas.ts")
    const { findings, checked, unmatched } = checkResponses(answers)
    if (process.env.FOS_RESPONSE_SCHEMAS === "report") console.log(`response schemas: ${checked} answers checked, ${unmatched} not an operation's`)
    expect([...new Set(findings)], "answers that break their operation's declared responses (test/responseSchemas.ts)").toEqual([])
  }, 120_000)
}
