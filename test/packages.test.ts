/**
 * The packages as a project outside this repository gets them: every public package is built (`npm run build`),
 * packed (`npm pack`), and installed from its tarball into a fresh project in the system's temporary directory,
 * with nothing else of this repository. There, a consumer file type-checks under `tsc --init`'s defaults, the
 * README's embedding example runs on plain Node 24, on Bun and on Deno against the installed JavaScript,
 * `npx fos serve` answers a request and stops, and the README's "Testing with fos" example type-checks and runs with
 * Vitest and 4 workers in parallel. A second project installs the client alone, which must not bring the engine.
 *
 * The tests of this repository run the packages' sources through the "@fos/source" export condition
 * (vitest.config.ts); every command here runs without it, as a user's would.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot } from "./fosProcess.ts"
import { testingExample, withOrganizationReport } from "./testingExample.ts"

const exec = promisify(execFile)
const bin = join(repoRoot, "node_modules/.bin")

/** The packages a user installs, by their folder in this repository. */
const publicPackages = {
  "@fos/contract": "packages/contract",
  "@fos/core": "packages/core",
  "@fos/http": "packages/http",
  "@fos/client": "packages/client",
  "@fos/testing": "adapters/testing",
  "@fos/sql": "adapters/sql",
  "@fos/serve": "adapters/serve",
  "@fos/node": "adapters/node"
} as const
type PackageName = keyof typeof publicPackages

/**
 * A user's environment: Node 24 first on the PATH (the machine's own Node may be older), and none of the
 * repository's source condition.
 */
const userEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` }
  delete env.NODE_OPTIONS
  delete env.DENO_CONDITIONS
  for (const key of Object.keys(env)) if (key.startsWith("npm_")) delete env[key]
  return env
}

const run = async (file: string, args: ReadonlyArray<string>, cwd: string, timeout = 240_000) =>
  exec(file, [...args], { cwd, env: userEnv(), timeout, maxBuffer: 64 * 1024 * 1024 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" })
  )

const npm = (args: ReadonlyArray<string>, cwd: string) => run("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline"], cwd)

/** The README's embedding example: the first `ts` block that creates an engine and is not a vitest file. */
const embeddingExample = (() => {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
  const block = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!).find((code) =>
    code.includes("createEngine(") && !code.includes(`from "vitest"`)
  )
  if (block === undefined) throw new Error("README.md has no embedding example")
  return block
})()

/** A file a consumer writes against the packages' types (no Node APIs: `tsc --init` sets `types: []`). */
const consumerFile = `import { createClient, ProblemError, type PromiseClient, verifyWebhook } from "@fos/client"
import { Customer, ErrorCatalog, type ErrorCode, EventEnvelope } from "@fos/contract"
import { createEngine, type Engine } from "@fos/http"
import { Schema } from "effect"

const apiKey = \`ck_sandbox_\${"c3".repeat(32)}\`

export async function listFirstCustomer(): Promise<string> {
  const engine: Engine = await createEngine({
    clock: { mode: "virtual", start: "2026-01-01T00:00:00.000Z" },
    webhookTransport: "memory",
    seed: {
      organizations: [{
        id: "org_consumer",
        name: "Consumer",
        status: "active",
        users: [{ id: "usr_c", email: "c@consumer.test", role: "admin" }],
        apiKeys: [{ key: apiKey, access: "read_write", createdBy: "usr_c" }]
      }]
    }
  })
  const fos: PromiseClient = createClient({ baseUrl: "http://fos/sandbox", apiKey, fetch: engine.fetch })
  const page = await fos.customers.list({ query: { limit: 10 } })
  const first: Customer | undefined = page.data[0]
  const code: ErrorCode = "CUSTOMER_NOT_FOUND"
  const event = Schema.decodeUnknownOption(EventEnvelope)({})
  await engine.clock.advance("1 minute")
  await engine.close()
  return [first?.id ?? "none", ErrorCatalog[code].status, event._tag, ProblemError.name, typeof verifyWebhook].join(" ")
}
`

let work = ""
const tarballs = {} as Record<PackageName, string>
let full = ""
let clientOnly = ""

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "fos-packages-"))
  const build = await run(join(bin, "tsc"), ["-b", "tsconfig.build.json"], repoRoot)
  expect(build.code, build.stdout + build.stderr).toBe(0)
  const packs = join(work, "tarballs")
  mkdirSync(packs)
  const pack = await npm(["pack", "--json", "--pack-destination", packs, ...Object.keys(publicPackages).flatMap((name) => ["-w", name])], repoRoot)
  expect(pack.code, pack.stderr).toBe(0)
  for (const { name, filename } of JSON.parse(pack.stdout) as ReadonlyArray<{ name: PackageName; filename: string }>) {
    tarballs[name] = join(packs, filename)
  }
  expect(Object.keys(tarballs).sort()).toEqual(Object.keys(publicPackages).sort())

  const project = (name: string) => {
    const dir = join(work, name)
    mkdirSync(dir)
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, type: "module" }))
    return dir
  }
  full = project("embedder")
  const installed = await npm(["install", ...Object.values(tarballs)], full)
  expect(installed.code, installed.stderr).toBe(0)
  clientOnly = project("client-only")
  const client = await npm(["install", tarballs["@fos/client"], tarballs["@fos/contract"]], clientOnly)
  expect(client.code, client.stderr).toBe(0)
}, 600_000)

afterAll(() => {
  if (work !== "") rmSync(work, { recursive: true, force: true })
})

describe("the packed packages", () => {
  it("hold their built JavaScript, declarations, commands, README and LICENSE, and no sources, tests or benches", async () => {
    for (const [name, tarball] of Object.entries(tarballs)) {
      const listing = await run("tar", ["tzf", tarball], work)
      const files = listing.stdout.trim().split("\n").map((f) => f.replace(/^package\//, ""))
      expect(files, name).toEqual(expect.arrayContaining(["package.json", "README.md", "LICENSE"]))
      // A command (the manifest's `bin`) is JavaScript as written: @fos/node's bin/fos.js says why.
      const manifest = JSON.parse(readFileSync(join(repoRoot, publicPackages[name as PackageName], "package.json"), "utf8")) as {
        bin?: Record<string, string>
      }
      const commands = Object.values(manifest.bin ?? {}).map((target) => target.replace(/^\.\//, ""))
      expect(files, name).toEqual(expect.arrayContaining(commands))
      const shipped = files.filter((f) => !["package.json", "README.md", "LICENSE", ...commands].includes(f))
      expect(shipped.length, name).toBeGreaterThan(0)
      for (const file of shipped) expect(file, name).toMatch(/^dist\/.*(?<!\.test)\.(js|d\.ts)$/)
    }
  })

  it("declare an exports map with types and import, and their dependencies at the versions this repository pins", () => {
    for (const [name, folder] of Object.entries(publicPackages)) {
      const manifest = JSON.parse(readFileSync(join(repoRoot, folder, "package.json"), "utf8")) as {
        exports: Record<string, string | Record<string, string>>
        dependencies: Record<string, string>
        private?: boolean
      }
      expect(manifest.private, name).toBeUndefined()
      for (const [subpath, target] of Object.entries(manifest.exports)) {
        if (subpath === "./package.json") continue
        expect(target, `${name} ${subpath}`).toMatchObject({ types: expect.stringMatching(/^\.\/dist\/.*\.d\.ts$/), import: expect.stringMatching(/^\.\/dist\/.*\.js$/) })
      }
      for (const [dependency, version] of Object.entries(manifest.dependencies)) {
        const installed = JSON.parse(readFileSync(join(repoRoot, "node_modules", dependency, "package.json"), "utf8")) as { version: string }
        expect(version, `${name} → ${dependency}`).toBe(installed.version)
      }
    }
  })
})

describe("a project outside this repository", () => {
  it("type-checks a consumer file under tsc --init's defaults (module nodenext, strict)", async () => {
    const dir = join(full, "typed")
    mkdirSync(dir)
    const init = await run(join(bin, "tsc"), ["--init"], dir)
    expect(init.code, init.stdout).toBe(0)
    const config = readFileSync(join(dir, "tsconfig.json"), "utf8")
    expect(config).toMatch(/"module": "nodenext"/)
    expect(config).toMatch(/"strict": true/)
    writeFileSync(join(dir, "consumer.ts"), consumerFile)
    const tsc = await run(join(bin, "tsc"), ["--noEmit", "-p", "tsconfig.json"], dir)
    expect(tsc.code, tsc.stdout + tsc.stderr).toBe(0)
  })

  const runtimes = [
    ["plain Node 24", join(bin, "node"), []],
    ["Bun", join(bin, "bun"), []],
    ["Deno (node_modules)", join(bin, "deno"), ["run", "-A"]]
  ] as const
  for (const [runtime, file, args] of runtimes) {
    it(`runs the README's embedding example on ${runtime}`, async () => {
      const example = join(full, `embedding-${runtime.split(" ")[0]!.toLowerCase()}.ts`)
      writeFileSync(example, `${embeddingExample}\nconsole.log("embedding example finished")\n`)
      const result = await run(file, [...args, example], full)
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toContain("embedding example finished")
    })
  }

  it("tells npx fos --version and fos serve --help", async () => {
    const version = await run("npx", ["fos", "--version"], full)
    expect(version.code, version.stderr).toBe(0)
    const manifest = JSON.parse(readFileSync(join(full, "node_modules/@fos/node/package.json"), "utf8")) as { version: string }
    expect(version.stdout.trim()).toBe(`fos ${manifest.version}`)
    const help = await run("npx", ["fos", "serve", "--help"], full)
    expect(help.code, help.stderr).toBe(0)
    expect(help.stdout).toContain("--store")
  })

  it("starts npx fos serve --port 0 --store memory, answers a request, and stops cleanly on SIGTERM", async () => {
    // In a process group of its own, signalled as a terminal or a supervisor signals it: npx, the shell it starts
    // and the server all get the signal.
    const child: ChildProcess = spawn("npx", ["fos", "serve", "--port", "0", "--store", "memory"], {
      cwd: full,
      env: userEnv(),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
    let out = ""
    let err = ""
    child.stdout!.on("data", (chunk) => (out += chunk))
    child.stderr!.on("data", (chunk) => (err += chunk))
    const exited = new Promise<string>((resolve) => child.on("exit", (code, signal) => resolve(`${code ?? signal}`)))
    let base = ""
    try {
      const sandbox = await new Promise<string>((resolve, reject) => {
        const poll = setInterval(() => {
          const base = /^sandbox: (http:\/\/\S+)$/m.exec(out)?.[1]
          const key = /sandbox key: (ck_sandbox_[0-9a-f]{64})/.exec(out)?.[1]
          if (base !== undefined && key !== undefined) {
            clearInterval(poll)
            resolve(`${base} ${key}`)
          }
        }, 50)
        void exited.then((code) => {
          clearInterval(poll)
          reject(new Error(`npx fos serve exited (${code}) before listening\n${out}\n${err}`))
        })
      })
      const [sandboxBase, key] = sandbox.split(" ") as [string, string]
      base = sandboxBase
      const me = await fetch(`${base}/v2/portal/users/me`, { headers: { "x-api-key": key } })
      expect(me.status).toBe(200)
      expect(await me.json()).toMatchObject({ apiKey: { environment: "sandbox", access: "read_write" } })
      expect((await fetch(new URL("/docs", base))).status).toBe(200)
    } finally {
      process.kill(-child.pid!, "SIGTERM")
    }
    // npm itself ends by the signal it was sent; the server under it finishes and exits on its own.
    expect(["0", "SIGTERM"], err).toContain(await exited)
    expect(err).not.toMatch(/Error|at .*\(/)
    // The server is gone with it: nothing answers on its port any more.
    await expect(fetch(`${base}/v2/portal/users/me`)).rejects.toThrow()
  })

  it("runs the README's Testing with fos example with Vitest, 4 workers in parallel, each in an organization of its own", async () => {
    const files = testingExample()
    expect(Object.keys(files).sort()).toEqual(["fos.setup.ts", "onboarding.test.ts", "vitest.config.ts"])
    // Vitest, as the project's own dev dependency, at the version this repository tests with.
    const vitestVersion = (JSON.parse(readFileSync(join(repoRoot, "node_modules/vitest/package.json"), "utf8")) as { version: string }).version
    const added = await npm(["install", "--save-dev", `vitest@${vitestVersion}`], full)
    expect(added.code, added.stderr).toBe(0)
    // The three files as the README has them type-check against the installed declarations, under tsc --init's defaults.
    const typed = join(full, "typed-testing")
    mkdirSync(typed)
    expect((await run(join(bin, "tsc"), ["--init"], typed)).code).toBe(0)
    for (const [name, code] of Object.entries(files)) writeFileSync(join(typed, name), code)
    const tsc = await run(join(bin, "tsc"), ["--noEmit", "-p", "tsconfig.json"], typed)
    expect(tsc.code, tsc.stdout + tsc.stderr).toBe(0)
    // And run: the test file four times over, so that each of 4 workers runs one.
    const dir = join(full, "testing")
    mkdirSync(dir)
    writeFileSync(join(dir, "vitest.config.ts"), files["vitest.config.ts"]!)
    writeFileSync(join(dir, "fos.setup.ts"), files["fos.setup.ts"]!)
    for (const n of [1, 2, 3, 4]) writeFileSync(join(dir, `onboarding-${n}.test.ts`), withOrganizationReport(files["onboarding.test.ts"]!))
    const result = await run(join(bin, "node"), [join(full, "node_modules/vitest/vitest.mjs"), "run", "--maxWorkers=4", "--reporter=json", "--outputFile=report.json"], dir)
    expect(result.code, result.stdout + result.stderr).toBe(0)
    const report = JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as { numTotalTests: number; numPassedTests: number }
    expect(report.numTotalTests).toBe(8)
    expect(report.numPassedTests).toBe(8)
    const lines = readFileSync(join(dir, "organizations.txt"), "utf8").trim().split("\n").map((line) => line.split(" "))
    expect(lines).toHaveLength(4)
    expect(new Set(lines.map(([worker]) => worker)).size).toBe(4)
    expect(new Set(lines.map(([, organization]) => organization)).size).toBe(4)
  }, 240_000)

  it("gets the client and the contract, and not the engine, when it installs the client alone", async () => {
    const installed = readdirSync(join(clientOnly, "node_modules/@fos")).sort()
    expect(installed).toEqual(["client", "contract"])
    for (const engine of ["core", "http", "sql", "@electric-sql"]) {
      expect(existsSync(join(clientOnly, "node_modules", engine.startsWith("@") ? engine : `@fos/${engine}`)), engine).toBe(false)
    }
    writeFileSync(join(clientOnly, "use.mjs"), `import { createClient, verifyWebhook } from "@fos/client"
import { ErrorCatalog } from "@fos/contract"
const client = createClient({ baseUrl: "http://127.0.0.1:1/sandbox", apiKey: "ck_sandbox_x" })
console.log(typeof client.customers.list, typeof verifyWebhook, ErrorCatalog.CUSTOMER_NOT_FOUND.status)
`)
    const result = await run(join(bin, "node"), ["use.mjs"], clientOnly)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trim()).toBe("function function 404")
  })
})

describe("the store contract in @fos/core's tarball", () => {
  it("ships @fos/core/store-contract with its runners, and passes docs/stores.md's SQLite store under node --test, durability and the kill included", async () => {
    const listing = await run("tar", ["tzf", tarballs["@fos/core"]], work)
    expect(listing.stdout.trim().split("\n")).toEqual(expect.arrayContaining([
      "package/dist/storeContract/index.js",
      "package/dist/storeContract/index.d.ts",
      "package/dist/runners/vitest.js",
      "package/dist/runners/node.js",
      "package/dist/runners/processes.js",
      "package/dist/runners/child.js"
    ]))
    // The documentation's store and node:test file, in the project that installed the tarballs, on Node 24.
    const doc = readFileSync(join(repoRoot, "docs/stores.md"), "utf8")
    const blocks = Object.fromEntries([...doc.matchAll(/^```ts title="([^"]+)"\n([\s\S]*?)^```$/gm)].map((m) => [m[1]!, m[2]!]))
    const dir = join(full, "sqlite-store")
    mkdirSync(dir)
    for (const name of ["sqliteStore.ts", "sqliteStore.node.ts"]) writeFileSync(join(dir, name), blocks[name]!)
    const result = await run(join(bin, "node"), ["--test", "--test-reporter=tap", "sqliteStore.node.ts"], dir)
    expect(result.code, result.stdout + result.stderr).toBe(0)
    expect(result.stdout).toMatch(/^# fail 0$/m)
    expect(Number(/^# pass (\d+)$/m.exec(result.stdout)?.[1])).toBeGreaterThan(60)
    expect(result.stdout).toMatch(/^\s*ok \d+ - loses no acknowledged commit when its process is killed \(SIGKILL\)/m)
  }, 240_000)
})
