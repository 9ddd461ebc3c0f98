/**
 * docs/stores.md's SQLite store runs as written: its titled `ts` blocks (the store, a Vitest file and a node:test
 * file that run the published store contract on it) are written to a directory inside the repository, so that
 * `@fos/core` and `effect` resolve as they do for a reader working in it; they type-check with the project's
 * settings, the store takes under 100 lines, and the contract passes it under Vitest and under `node --test`, its
 * durability cases (a close and a reopen; SIGKILL in the middle of commits) among them. And an engine serves from it:
 * what a request wrote is there for the engine opened again on the same file.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import ts from "typescript"
import { createEngine } from "@fos/http"
import type { Store } from "@fos/core"
import type { Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { keysOf, orgSeed, seedOf } from "./support.ts"

const exec = promisify(execFile)
const root = join(import.meta.dirname, "..")
const doc = readFileSync(join(root, "docs/stores.md"), "utf8")

/** The blocks by their titles. */
const files = Object.fromEntries([...doc.matchAll(/^```ts title="([^"]+)"\n([\s\S]*?)^```$/gm)].map((m) => [m[1]!, m[2]!]))

const durabilityCases = [
  "keeps what it committed across a close and a reopen, and nothing a rollback took back",
  "loses no acknowledged commit when its process is killed (SIGKILL) in the middle of its commits"
]

// Outside every include of tsconfig.json and vitest.config.ts, so the project's own runs never pick the files up;
// .gitignore names the directory in case a run is killed before it is removed.
let dir = ""
beforeAll(() => {
  dir = mkdtempSync(join(root, ".docs-examples-"))
  for (const [name, code] of Object.entries(files)) writeFileSync(join(dir, name), code)
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: "../tsconfig.json", include: ["*.ts"] }))
  writeFileSync(join(dir, "vitest.config.ts"), `const conditions = ["@fos/source", "module", "node", "development|production"]
export default { resolve: { conditions }, ssr: { resolve: { conditions } }, test: { include: ["*.test.ts"], testTimeout: 30000 } }
`)
})
afterAll(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

/** Node from the repository's root, as the tests' own processes run it (NODE_OPTIONS gives the source condition). */
const node = (args: ReadonlyArray<string>) =>
  exec(process.execPath, [...args], { cwd: root, maxBuffer: 16 * 1024 * 1024, timeout: 240_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" })
  )

describe("docs/stores.md", () => {
  it("has the SQLite store on the Image port in under 100 lines, and a Vitest and a node:test file that run the contract on it", () => {
    expect(Object.keys(files).sort()).toEqual(["sqliteStore.node.ts", "sqliteStore.test.ts", "sqliteStore.ts"])
    const store = files["sqliteStore.ts"]!
    expect(store).toContain(`from "node:sqlite"`)
    expect(store).toContain("MemoryStore.make(image)")
    expect(store.split("\n").length).toBeLessThan(100)
    expect(files["sqliteStore.test.ts"]).toContain(`from "@fos/core/store-contract/vitest"`)
    expect(files["sqliteStore.node.ts"]).toContain(`from "@fos/core/store-contract/node"`)
  })

  it("type-checks with the project's settings", () => {
    const config = ts.getParsedCommandLineOfConfigFile(join(dir, "tsconfig.json"), {}, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
      }
    })!
    const program = ts.createProgram({ rootNames: config.fileNames, options: config.options })
    const diagnostics = Object.keys(files).flatMap((name) => {
      const file = program.getSourceFile(join(dir, name))
      expect(file, name).toBeDefined()
      return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]
    })
    const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => root, getNewLine: () => "\n" }
    expect(diagnostics.map((d) => ts.formatDiagnostic(d, host))).toEqual([])
  }, 180_000)

  // Both runners at once: most of their time is SQLite syncing its file.
  it("its store passes the contract under Vitest and under node --test, durability and the kill included", async () => {
    const report = join(dir, "report.json")
    const [vitest, nodeTest] = await Promise.all([
      node([join(root, "node_modules/vitest/vitest.mjs"), "run", "--root", dir, "sqliteStore.test.ts", "--reporter=json", `--outputFile=${report}`]),
      node(["--test", "--test-reporter=tap", join(dir, "sqliteStore.node.ts")])
    ])

    expect(vitest.code, vitest.stdout + vitest.stderr).toBe(0)
    const results = (JSON.parse(readFileSync(report, "utf8")) as {
      testResults: ReadonlyArray<{ assertionResults: ReadonlyArray<{ title: string; status: string }> }>
    }).testResults.flatMap((f) => f.assertionResults)
    expect(results.length).toBeGreaterThan(60)
    expect(results.filter((r) => r.status !== "passed")).toEqual([])
    for (const name of durabilityCases) expect(results.map((r) => r.title)).toContain(name)

    expect(nodeTest.code, nodeTest.stdout + nodeTest.stderr).toBe(0)
    const passed = [...nodeTest.stdout.matchAll(/^\s*ok \d+ - (.*)$/gm)].map((m) => m[1]!)
    for (const name of durabilityCases) expect(passed).toContain(name)
    expect(/^# fail 0$/m.test(nodeTest.stdout), nodeTest.stdout).toBe(true)
    expect(Number(/^# pass (\d+)$/m.exec(nodeTest.stdout)?.[1])).toBe(results.length)
  }, 240_000)

  it("its store serves an engine: an endpoint made is listed by the engine opened again on the same file", async () => {
    const { layerSqliteStore } = (await import(join(dir, "sqliteStore.ts"))) as { layerSqliteStore: (path: string) => Layer.Layer<Store.Store, Error> }
    const file = join(dir, "engine.db")
    const key = keysOf("sqlite").sandbox
    const call = (engine: Awaited<ReturnType<typeof createEngine>>, method: string, body?: unknown) =>
      engine.fetch("http://fos.test/sandbox/v2/webhooks/endpoints", {
        method,
        headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    const first = await createEngine({ store: layerSqliteStore(file), seed: seedOf(orgSeed("sqlite")), webhookTransport: "memory" })
    expect((await call(first, "POST", { url: "https://hooks.example.com/sqlite" })).status).toBe(201)
    await first.close()
    const second = await createEngine({ store: layerSqliteStore(file), webhookTransport: "memory" })
    const listed = (await (await call(second, "GET")).json()) as { data: ReadonlyArray<{ url: string }> }
    await second.close()
    expect(listed.data.map((e) => e.url)).toEqual(["https://hooks.example.com/sqlite"])
  })
})
