/**
 * The packages as a project outside this repository gets them: every public package is built (`npm run build`),
 * packed (`npm pack`), and installed from its tarball into a fresh project in the system's temporary directory,
 * with nothing else of this repository. There, a consumer file type-checks under `tsc --init`'s defaults, the
 * docs/embedding.md's first example runs on plain Node 24, on Bun and on Deno against the installed JavaScript,
 * `npx fos serve` answers a request and stops, `fos serve` runs the server's bundle on the memory store and on PGlite
 * (with no module of effect or of fos's packages loaded beside it), and docs/testing.md's @fos/testing example type-checks and runs with
 * Vitest and 4 workers in parallel. A second project installs the client alone, which must not bring the engine.
 * Two more are hosts with an Effect of their own, one on the lowest version of the packages' peer range and one on
 * the newest published in it: each has one copy of effect, type-checks an Effect host that uses the engine's layer
 * and its routes as a web handler with no cast, and runs it; and what the embedding packages install runs no
 * install script and carries no UI bundle.
 *
 * The tests of this repository run the packages' sources through the "@fos/source" export condition
 * (vitest.config.ts); every command here runs without it, as a user's would.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { listeningOrigin, repoRoot } from "./fosProcess.ts"
import { testingExample, withOrganizationReport } from "./testingExample.ts"
import { blocksOf } from "./guides.ts"

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

/** The packages a host embeds the engine with: no server, no store of PostgreSQL or PGlite. */
const embeddingPackages = ["@fos/contract", "@fos/core", "@fos/http", "@fos/client"] as const

/**
 * The peer range of `effect` (and of each `@effect/*` package) the packages declare, the same in every package; its
 * lowest version is the one this repository pins and its whole suite runs on.
 */
const peerRanges = (() => {
  const ranges = new Map<string, string>()
  for (const folder of Object.values(publicPackages)) {
    const manifest = JSON.parse(readFileSync(join(repoRoot, folder, "package.json"), "utf8")) as { peerDependencies?: Record<string, string> }
    for (const [name, range] of Object.entries(manifest.peerDependencies ?? {})) {
      if (name !== "effect" && !name.startsWith("@effect/")) continue
      if ((ranges.get(name) ?? range) !== range) throw new Error(`${folder} takes ${name} ${range}, another package ${ranges.get(name)}`)
      ranges.set(name, range)
    }
  }
  return ranges
})()
const effectRange = peerRanges.get("effect")!
/** `^x.y.z`: the range's lowest version. */
const lowestOf = (range: string) => {
  const lowest = /^\^(\d+\.\d+\.\d+)$/.exec(range)?.[1]
  if (lowest === undefined) throw new Error(`a peer range is ^ and a version (${range})`)
  return lowest
}

/** Orders two `x.y.z` versions. */
const compareVersions = (a: string, b: string) => {
  const [x, y] = [a, b].map((version) => version.split(".").map(Number))
  return x![0]! - y![0]! || x![1]! - y![1]! || x![2]! - y![2]!
}

/** Every package installed under `dir`'s node_modules (nested ones too), by the folder holding its package.json. */
const installedPackages = (dir: string): ReadonlyArray<{ readonly folder: string; readonly manifest: { name: string; version: string; scripts?: Record<string, string> } }> => {
  const found: Array<{ folder: string; manifest: { name: string; version: string; scripts?: Record<string, string> } }> = []
  const walk = (modules: string) => {
    if (!existsSync(modules)) return
    for (const entry of readdirSync(modules)) {
      if (entry.startsWith(".")) continue
      const folders = entry.startsWith("@") ? readdirSync(join(modules, entry)).map((name) => join(modules, entry, name)) : [join(modules, entry)]
      for (const folder of folders) {
        const manifest = join(folder, "package.json")
        if (!existsSync(manifest)) continue
        found.push({ folder, manifest: JSON.parse(readFileSync(manifest, "utf8")) })
        walk(join(folder, "node_modules"))
      }
    }
  }
  walk(join(dir, "node_modules"))
  return found
}

/** What npm would run on installing `packages`: a preinstall, install or postinstall script, or node-gyp for a binding.gyp. */
const installScriptsOf = (packages: ReadonlyArray<{ readonly folder: string; readonly manifest: { name: string; scripts?: Record<string, string> } }>) =>
  packages.flatMap(({ folder, manifest }) => [
    ...["preinstall", "install", "postinstall"].filter((hook) => manifest.scripts?.[hook] !== undefined).map((hook) => `${manifest.name} ${hook}`),
    ...(existsSync(join(folder, "binding.gyp")) ? [`${manifest.name} binding.gyp`] : [])
  ])

/**
 * The packages `roots` bring, themselves included, in the project `dir`: each one's dependencies and required
 * peers, found as Node finds them (the nearest node_modules up from the package that needs them).
 */
const closureOf = (dir: string, roots: ReadonlyArray<string>) => {
  type Manifest = { name: string; scripts?: Record<string, string>; dependencies?: Record<string, string>; peerDependencies?: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }> }
  const found = new Map<string, Manifest>()
  const resolve = (from: string, name: string): string => {
    for (let at = from; at.startsWith(dir); at = join(at, "..")) {
      const folder = join(at, "node_modules", name)
      if (existsSync(join(folder, "package.json"))) return folder
    }
    throw new Error(`${name}, needed by ${from}, is not installed`)
  }
  const visit = (folder: string) => {
    if (found.has(folder)) return
    const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as Manifest
    found.set(folder, manifest)
    const peers = Object.keys(manifest.peerDependencies ?? {}).filter((name) => manifest.peerDependenciesMeta?.[name]?.optional !== true)
    for (const name of [...Object.keys(manifest.dependencies ?? {}), ...peers]) visit(resolve(folder, name))
  }
  for (const name of roots) visit(resolve(dir, name))
  return [...found.entries()].map(([folder, manifest]) => ({ folder, manifest }))
}

/** Kilobytes on disk under `path` (du -sk). */
const kilobytes = async (path: string) => {
  const du = await run("du", ["-sk", path], work)
  expect(du.code, du.stderr).toBe(0)
  return Number(du.stdout.split("\t")[0])
}

/**
 * A host written with Effect: one engine (`layerEmbedded`) for its own Effect code, which moves the clock with
 * `yield* advanceBy`, and for its HTTP handler, `HttpRouter.toWebHandler` of the routes layer, called with a
 * Request alone. Both build the engine through one memo map, so the request reads the clock the host moved. It is
 * type-checked strictly and has no cast: a type that leaves effect's (a second copy of effect, a Context<unknown>
 * to pass) fails it.
 */
const effectHostFile = `import { advanceBy, layerEmbedded, layerRoutes, sandboxNow } from "@fos/http"
import { Effect, Layer, ManagedRuntime } from "effect"
import { HttpRouter, HttpServer } from "effect/http"

const apiKey = \`ck_sandbox_\${"d4".repeat(32)}\`
const start = Date.parse("2026-01-01T00:00:00.000Z")

const engine = layerEmbedded({
  clock: { mode: "virtual", start },
  seed: {
    organizations: [{
      id: "org_host",
      name: "Host",
      status: "active",
      users: [{ id: "usr_h", email: "h@host.test", role: "admin" }],
      apiKeys: [{ key: apiKey, access: "read_write", createdBy: "usr_h" }]
    }]
  }
})
const memoMap = Layer.makeMemoMapUnsafe()
const runtime = ManagedRuntime.make(engine, { memoMap })
const web = HttpRouter.toWebHandler(layerRoutes(engine).pipe(Layer.provide(HttpServer.layerServices)), { memoMap, disableLogger: true })

const moved: number = await runtime.runPromise(Effect.gen(function*() {
  yield* advanceBy("1 minute")
  return yield* sandboxNow("org_host")
}))
const response: Response = await web.handler(new Request("http://host/sandbox/v2/simulate/clock", { headers: { "x-api-key": apiKey } }))
const clock = (await response.json()) as { readonly now: string }
console.log(JSON.stringify({ movedMs: moved - start, status: response.status, now: clock.now }))
await web.dispose()
await runtime.dispose()
`

/** docs/embedding.md's first example: the first plain `ts` block of the guides that creates an engine and is not a vitest file. */
const embeddingExample = (() => {
  const block = blocksOf("ts").find((b) => b.info === "" && b.code.includes("createEngine(") && !b.code.includes(`from "vitest"`))
  if (block === undefined) throw new Error("the guides have no embedding example")
  return block.code
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
/** The Effect hosts, by the effect version each installed first. */
const hosts: Array<{ readonly effect: string; readonly dir: string }> = []

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "fos-packages-"))
  const build = await run("npm", ["run", "build"], repoRoot)
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
  // The newest effect published in the peer range, asked of the registry now: a release after this repository's
  // pin is what a new host gets, and it must work without this repository changing.
  const published = await run("npm", ["view", `effect@${effectRange}`, "version", "--json"], work)
  expect(published.code, published.stderr).toBe(0)
  const inRange = [published.stdout].flatMap((out) => JSON.parse(out) as string | ReadonlyArray<string>)
  const newest = inRange.toSorted((a, b) => compareVersions(a, b)).at(-1)!
  for (const effect of [...new Set([lowestOf(effectRange), newest])]) {
    const dir = project(`effect-host-${effect}`)
    // The host's own effect, as a host has it before it adds fos.
    const own = await npm(["install", "--save-exact", `effect@${effect}`], dir)
    expect(own.code, own.stderr).toBe(0)
    const installed = await npm(["install", ...embeddingPackages.map((name) => tarballs[name])], dir)
    expect(installed.code, installed.stderr).toBe(0)
    hosts.push({ effect, dir })
  }
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
      // The server's bundle, which bin/fos.js runs (scripts/bundle-server.ts).
      if (name === "@fos/node") expect(files, name).toContain("dist/server/fos.js")
    }
  })

  it("declare an exports map with types and import, their dependencies at the versions this repository pins, and effect as a peer", () => {
    const root = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { devDependencies: Record<string, string> }
    for (const [name, folder] of Object.entries(publicPackages)) {
      const manifest = JSON.parse(readFileSync(join(repoRoot, folder, "package.json"), "utf8")) as {
        exports: Record<string, string | Record<string, string>>
        dependencies: Record<string, string>
        peerDependencies?: Record<string, string>
        private?: boolean
      }
      // Effect is the host's: a package that depended on it would bring a copy of its own beside the host's.
      expect(Object.keys(manifest.dependencies).filter((d) => d === "effect" || d.startsWith("@effect/")), name).toEqual([])
      expect(manifest.peerDependencies?.effect, name).toBe(effectRange)
      for (const [peer, range] of Object.entries(manifest.peerDependencies ?? {})) {
        if (peer !== "effect" && !peer.startsWith("@effect/")) continue
        // The range starts at the version this repository installs exactly, so its whole suite runs on the lowest.
        expect(root.devDependencies[peer], `${name} → ${peer}`).toBe(lowestOf(range))
        const installed = JSON.parse(readFileSync(join(repoRoot, "node_modules", peer, "package.json"), "utf8")) as { version: string }
        expect(installed.version, `${name} → ${peer}`).toBe(lowestOf(range))
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
    it(`runs docs/embedding.md's first example on ${runtime}`, async () => {
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

  it("runs fos serve from the server's bundle, on the memory store and on PGlite, with no module of effect or of fos's packages beside it", async () => {
    const hook = join(repoRoot, "test/fixtures/loadedModules.mjs")
    for (const store of ["memory", join(work, "bundle-pglite")]) {
      const list = join(work, `bundle-modules-${store === "memory" ? "memory" : "pglite"}.txt`)
      const child = spawn(join(bin, "node"), [join(full, "node_modules/@fos/node/bin/fos.js"), "serve", "--port", "0", "--store", store, "--quiet"], {
        cwd: full,
        env: { ...userEnv(), NODE_OPTIONS: `--import=${hook}`, FOS_LOADED_MODULES: list },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let err = ""
      child.stderr!.on("data", (chunk) => (err += chunk))
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      const origin = await listeningOrigin(child)
      try {
        expect((await fetch(`${origin}/healthz`)).status, err).toBe(200)
        // Swagger UI's files, which the bundle finds by module resolution.
        expect((await fetch(`${origin}/docs/swagger-ui.css`)).status, err).toBe(200)
      } finally {
        child.kill("SIGTERM")
      }
      expect(await exited, err).toBe(0)
      const loaded = readFileSync(list, "utf8").split("\n").filter((url) => url.startsWith("file:"))
      const installed = `${pathToFileURL(join(full, "node_modules")).href}/`
      expect(loaded, store).toContain(`${installed}@fos/node/dist/server/fos.js`)
      // Effect and fos's packages are in the bundle; the one package it imports is PGlite, for a PGlite store.
      const beside = loaded.filter((url) => !url.startsWith(`${installed}@fos/node/`)).map((url) => url.slice(installed.length).split("/").slice(0, 2).join("/"))
      expect([...new Set(beside)], store).toEqual(store === "memory" ? [] : ["@electric-sql/pglite"])
    }
  }, 240_000)

  it("runs docs/testing.md's @fos/testing example with Vitest, 4 workers in parallel, each in an organization of its own", async () => {
    const files = testingExample()
    expect(Object.keys(files).sort()).toEqual(["fos.setup.ts", "onboarding.test.ts", "vitest.config.ts"])
    // Vitest, as the project's own dev dependency, at the version this repository tests with.
    const vitestVersion = (JSON.parse(readFileSync(join(repoRoot, "node_modules/vitest/package.json"), "utf8")) as { version: string }).version
    const added = await npm(["install", "--save-dev", `vitest@${vitestVersion}`], full)
    expect(added.code, added.stderr).toBe(0)
    // The three files as docs/testing.md has them type-check against the installed declarations, under tsc --init's defaults.
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
    // The JSON reporter's stdout names no failure: the report says which test failed and why.
    const reportText = existsSync(join(dir, "report.json")) ? readFileSync(join(dir, "report.json"), "utf8") : "{}"
    const report = JSON.parse(reportText) as {
      numTotalTests: number
      numPassedTests: number
      testResults?: ReadonlyArray<{ name: string; message?: string; assertionResults: ReadonlyArray<{ fullName: string; status: string; failureMessages: ReadonlyArray<string> }> }>
    }
    const failures = (report.testResults ?? []).flatMap((file) => [
      ...(file.message ? [`${file.name}: ${file.message}`] : []),
      ...file.assertionResults.filter((t) => t.status === "failed").map((t) => `${t.fullName}: ${t.failureMessages.join("\n")}`)
    ])
    expect(result.code, [result.stdout + result.stderr, ...failures].join("\n")).toBe(0)
    expect(report.numTotalTests).toBe(8)
    expect(report.numPassedTests).toBe(8)
    const lines = readFileSync(join(dir, "organizations.txt"), "utf8").trim().split("\n").map((line) => line.split(" "))
    expect(lines).toHaveLength(4)
    expect(new Set(lines.map(([worker]) => worker)).size).toBe(4)
    expect(new Set(lines.map(([, organization]) => organization)).size).toBe(4)
  }, 240_000)

  it("has one copy of effect with every package installed", () => {
    expect(installedPackages(full).filter(({ manifest }) => manifest.name === "effect")).toHaveLength(1)
  })

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

describe("a host with an Effect of its own", () => {
  it("is tried on the lowest effect of the peer range, which this repository pins, and on the newest published", () => {
    expect(hosts.length).toBeGreaterThan(0)
    expect(hosts[0]!.effect).toBe(lowestOf(effectRange))
  })

  it("keeps one copy of effect, its own, whatever the version in the range", () => {
    for (const { effect, dir } of hosts) {
      const copies = installedPackages(dir).filter(({ manifest }) => manifest.name === "effect")
      expect(copies.map(({ folder, manifest }) => [folder, manifest.version]), effect).toEqual([[join(dir, "node_modules/effect"), effect]])
    }
  })

  it("type-checks a host that yields advanceBy and serves the routes layer through toWebHandler with no cast, and runs it", async () => {
    for (const { effect, dir } of hosts) {
      const typed = join(dir, "typed")
      mkdirSync(typed)
      expect((await run(join(bin, "tsc"), ["--init"], typed)).code).toBe(0)
      expect(readFileSync(join(typed, "tsconfig.json"), "utf8")).toMatch(/"strict": true/)
      writeFileSync(join(typed, "host.ts"), effectHostFile)
      const tsc = await run(join(bin, "tsc"), ["--noEmit", "-p", "tsconfig.json"], typed)
      expect(tsc.code, `effect ${effect}: ${tsc.stdout}${tsc.stderr}`).toBe(0)
      writeFileSync(join(dir, "host.ts"), effectHostFile)
      const result = await run(join(bin, "node"), ["host.ts"], dir)
      expect(result.code, `effect ${effect}: ${result.stderr}`).toBe(0)
      expect(JSON.parse(result.stdout.trim().split("\n").at(-1)!), effect).toEqual({ movedMs: 60_000, status: 200, now: "2026-01-01T00:01:00.000Z" })
    }
  })

  it("installs no install script and no UI bundle with the embedding packages", async () => {
    for (const { effect, dir } of hosts) {
      const names = installedPackages(dir).map(({ manifest }) => manifest.name)
      expect(names, effect).toEqual(expect.arrayContaining([...embeddingPackages, "effect"]))
      expect(names, effect).not.toContain("swagger-ui-dist")
      expect(installScriptsOf(installedPackages(dir)), effect).toEqual([])
    }
    // The size of what they install, beside effect's own (docs/performance.md records it). fos and its own
    // dependencies add about 7 MB; a browser bundle such as Swagger UI's (12 MB) would take them past the bound.
    const { dir } = hosts[0]!
    const all = await kilobytes(join(dir, "node_modules"))
    const effect = await kilobytes(join(dir, "node_modules/effect"))
    console.log(`contract, core, http and client install ${all} KiB, of which effect ${effect} KiB`)
    expect(all - effect).toBeLessThan(16 * 1024)
  })

  it("is refused at install, naming the peer, on an effect below the range, rather than given a copy of its own", async () => {
    const versions = await run("npm", ["view", "effect", "versions", "--json"], work)
    expect(versions.code, versions.stderr).toBe(0)
    // The newest release below the range: a host one step behind.
    const below = (JSON.parse(versions.stdout) as ReadonlyArray<string>)
      .filter((version) => /^\d+\.\d+\.\d+$/.test(version) && compareVersions(version, lowestOf(effectRange)) < 0)
      .toSorted(compareVersions)
      .at(-1)!
    const dir = join(work, "effect-host-below")
    mkdirSync(dir)
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "effect-host-below", private: true, type: "module", dependencies: { effect: below } }))
    const refused = await npm(["install", ...embeddingPackages.map((name) => tarballs[name])], dir)
    expect(refused.code, `effect ${below}`).not.toBe(0)
    expect(refused.stderr).toContain(`peer effect@"${effectRange}"`)
    expect(existsSync(join(dir, "node_modules/@fos"))).toBe(false)
  })

  it("brings no install script and no UI bundle with @fos/sql either, in a project that has every package", () => {
    const brought = closureOf(full, [...embeddingPackages, "@fos/sql"])
    const names = brought.map(({ manifest }) => manifest.name)
    expect(names).toEqual(expect.arrayContaining([...embeddingPackages, "@fos/sql", "@electric-sql/pglite", "@effect/sql-pg", "effect"]))
    expect(names).not.toContain("swagger-ui-dist")
    expect(installScriptsOf(brought)).toEqual([])
  })

  it("leaves Swagger UI to the server: the full install has it, under @fos/serve's dependency", () => {
    const serve = JSON.parse(readFileSync(join(full, "node_modules/@fos/serve/package.json"), "utf8")) as { dependencies: Record<string, string> }
    expect(Object.keys(serve.dependencies)).toContain("swagger-ui-dist")
    for (const name of embeddingPackages) {
      const manifest = JSON.parse(readFileSync(join(full, "node_modules", name, "package.json"), "utf8")) as { dependencies?: Record<string, string> }
      expect(Object.keys(manifest.dependencies ?? {}), name).not.toContain("swagger-ui-dist")
    }
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
