/**
 * The README's examples run as written. Every fenced block marked `ts` is written to a file in a directory inside
 * the repository (so `@fos/http`, `@fos/client` and `effect` resolve as they do for a reader working in it),
 * type-checked with the project's compiler settings, then run: a block that imports vitest as a test file under
 * vitest, any other as a script on the Node that runs this test. Other blocks (`sh`, `json`, plain) are not run,
 * except the operator commands' block, whose commands run as written, in order, against a running server.
 */
import { execFile, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { killAllFos, startFos } from "./fosProcess.ts"

const run = promisify(execFile)
const root = join(import.meta.dirname, "..")
const readme = readFileSync(join(root, "README.md"), "utf8")

/** The `ts` blocks, each with the README line it starts on. */
const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => ({
  code: m[1]!,
  line: readme.slice(0, m.index).split("\n").length
}))

const examples = blocks.map((block, i) => {
  const isTest = /from "vitest"/.test(block.code)
  return { ...block, isTest, name: `example${i + 1}-line${block.line}${isTest ? ".test" : ""}.ts` }
})

// Written when the tests start, outside every include of tsconfig.json and vitest.config.ts, so the project's own
// runs never pick the files up; .gitignore names the directory in case a run is killed before it is removed.
let dir = ""
const fileOf = (example: { readonly name: string }) => join(dir, example.name)
beforeAll(() => {
  dir = mkdtempSync(join(root, ".readme-examples-"))
  for (const example of examples) writeFileSync(fileOf(example), example.code)
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: "../tsconfig.json", include: ["*.ts"] }))
  // The repository's packages as its own tests read them: their sources, through the "@fos/source" condition.
  writeFileSync(join(dir, "vitest.config.ts"), `const conditions = ["@fos/source", "module", "node", "development|production"]
export default { resolve: { conditions }, ssr: { resolve: { conditions } }, test: { include: ["*.test.ts"], testTimeout: 30000 } }
`)
})
afterAll(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

/** Runs a Node script from the repository's root; the exit code, stdout and stderr. */
const node = async (args: ReadonlyArray<string>) =>
  run(process.execPath, [...args], { cwd: root, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" })
  )

describe("README examples", () => {
  it("has the embedding example and the time-driving test among its ts blocks", () => {
    expect(examples.some((e) => e.code.includes("createEngine(") && !e.isTest)).toBe(true)
    expect(examples.some((e) => e.code.includes("runUntilIdle(") && e.isTest)).toBe(true)
  })

  it("type-check with the project's settings", async () => {
    const tsc = await node([join(root, "node_modules/typescript/bin/tsc"), "--noEmit", "--listFiles", "-p", join(dir, "tsconfig.json")])
    const lines = tsc.stdout.split("\n")
    // Each example was compiled, and none has an error (errors elsewhere in the tree are other tests' business).
    for (const e of examples) expect(lines.some((l) => l.endsWith(fileOf(e))), `compiled ${e.name}`).toBe(true)
    const ours = lines.filter((l) => l.startsWith(relative(root, dir)) || l.startsWith(dir)).filter((l) => /error TS\d+/.test(l))
    expect(ours, ours.join("\n")).toEqual([])
  }, 180_000)

  for (const example of examples) {
    it(`the block at README.md line ${example.line} runs${example.isTest ? " as a vitest file, every test passing" : ""}`, async () => {
      if (!example.isTest) {
        const result = await node([fileOf(example)])
        expect(result.code, result.stderr).toBe(0)
        return
      }
      const report = join(dir, `report-${example.line}.json`)
      const result = await node([
        join(root, "node_modules/vitest/vitest.mjs"),
        "run",
        "--root",
        dir,
        example.name,
        "--reporter=json",
        `--outputFile=${report}`
      ])
      expect(result.code, result.stdout + result.stderr).toBe(0)
      const json = JSON.parse(readFileSync(report, "utf8")) as { numTotalTests: number; numPassedTests: number }
      expect(json.numTotalTests).toBeGreaterThan(0)
      expect(json.numPassedTests).toBe(json.numTotalTests)
    }, 120_000)
  }
})

describe("README operator commands", () => {
  const section = readme.slice(readme.indexOf("### Operator commands"))
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(section)![1]!
  const lines = block.split("\n").map((line) => line.replace(/\s+#.*$/, "").trim()).filter((line) => line !== "")

  afterAll(() => killAllFos())

  it("run as written, in order, against a running server, each exiting 0", async () => {
    expect(lines[0]).toMatch(/^export FOS_OPERATOR_TOKEN=…$/)
    expect(lines.length).toBeGreaterThan(5)
    const server = await startFos(["--store", "memory", "--port", "0"])
    try {
      // The token fos serve printed, as the README's first line says.
      const token = /^operator token .*: (\S+)$/m.exec(server.stdout())![1]!
      let lastKey: string | undefined
      for (const line of lines.slice(1)) {
        expect(line, line).toMatch(/^npm run fos -- /)
        // The one placeholder besides the token: the key that `keys create` printed.
        const command = line.replace(/ck_sandbox_…/, () => {
          expect(lastKey, "a key was created before it is revoked").toBeDefined()
          return lastKey!
        })
        const result = spawnSync("sh", ["-c", command], {
          cwd: root,
          env: { ...process.env, FOS_SERVER: server.origin, FOS_OPERATOR_TOKEN: token },
          encoding: "utf8"
        })
        expect(result.status, `${line}\n${result.stdout}\n${result.stderr}`).toBe(0)
        const key = /"key": "(ck_sandbox_[0-9a-f]{64})"/.exec(result.stdout)?.[1]
        if (key !== undefined) lastKey = key
      }
      // What the sequence did, seen through the server: the revoked key and the suspended organization refuse.
      const me = await fetch(`${server.origin}/sandbox/v2/portal/users/me`, { headers: { "x-api-key": lastKey! } })
      expect(me.status).toBe(401)
      const orgs = spawnSync(process.execPath, ["adapters/node/src/bin.ts", "orgs", "list"], {
        cwd: root,
        env: { ...process.env, FOS_SERVER: server.origin, FOS_OPERATOR_TOKEN: token },
        encoding: "utf8"
      })
      expect(orgs.stdout).toContain("org_acme")
      expect(orgs.stdout).toMatch(/"status": "suspended"/)
    } finally {
      await server.stop()
    }
  }, 120_000)
})
