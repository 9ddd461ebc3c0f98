/** An unknown flag names the closest one the command takes, and where every flag is listed; exit 2, nothing done. */
import { spawnSync } from "node:child_process"
import { resolve } from "node:path"
import { describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "..")
const fos = (...args: Array<string>) =>
  spawnSync(process.execPath, ["adapters/node/bin/fos.js", ...args], { cwd: root, encoding: "utf8", env: { ...process.env, FOS_SERVER: "http://127.0.0.1:9", FOS_OPERATOR_TOKEN: "t" } })

describe("an unknown flag", { timeout: 60_000 }, () => {
  it.each([
    [["keys", "create", "--orgg", "org_x"], "fos: unknown flag --orgg; did you mean --org? (fos keys --help lists every flag)"],
    [["serve", "--prot", "0"], "fos: unknown flag --prot; did you mean --port? (fos serve --help lists every flag)"],
    [["tail", "--typs", "events"], "fos: unknown flag --typs; did you mean --types? (fos tail --help lists every flag)"],
    [["listen", "--forward", "http://127.0.0.1:3000"], "fos: unknown flag --forward; did you mean --forward-to? (fos listen --help lists every flag)"],
    [["timers", "org_x", "--housekeepin"], "fos: unknown flag --housekeepin; did you mean --housekeeping? (fos timers --help lists every flag)"],
    [["orgs", "list", "--zzzzzzzz"], "fos: unknown flag --zzzzzzzz (fos orgs --help lists every flag)"]
  ])("fos %j", (args, message) => {
    const result = fos(...args)
    expect(result.status, result.stderr).toBe(2)
    expect(result.stderr).toBe(`${message}\n`)
    expect(result.stdout).toBe("")
  })
})
