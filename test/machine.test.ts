/**
 * What fos leaves on the machine (docs/embedding.md, "What the engine leaves on the machine"): an embedded engine
 * listens on no TCP port, on the memory store or on PGlite (a new directory's migrations, a restart, the SQL client),
 * and writes nothing outside the directory its host chose, with HOME, XDG_CACHE_HOME, TMPDIR and its working
 * directory each an empty folder; `fos serve` on a new PGlite directory listens on its HTTP port only, and keeps the
 * template cluster in the user's cache, as docs/storage.md says.
 *
 * Each process gets test/fixtures/recordListens.ts, which reports every TCP listen, so a listener that is gone before
 * the test looks is seen too. The listing reads Linux's /proc: elsewhere the file is skipped.
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { killAllFos, repoRoot, startFos } from "./fosProcess.ts"
import { httpCall, keysOf, orgSeed, seedOf } from "./support.ts"

const recorder = resolve(repoRoot, "test/fixtures/recordListens.ts")
const nodeOptions = `${process.env.NODE_OPTIONS ?? ""} --import=${recorder}`.trim()
const keys = keysOf("machine")
const seed = seedOf(orgSeed("machine"))

/** The TCP listens a process reported through the recorder (its stderr). */
const listensIn = (stderr: string): Array<{ port: number }> =>
  stderr.split("\n").filter((line) => line.startsWith("fos-test-listen ")).map((line) => JSON.parse(line.slice("fos-test-listen ".length)))

/** The ports of `pid`'s TCP sockets in LISTEN state: /proc/<pid>/net/tcp{,6} rows whose inode is one of its fds. */
const listeningPorts = (pid: number): Array<number> => {
  const inodes = new Set(readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
      return m === null ? [] : [m[1]!]
    } catch {
      return []
    }
  }))
  return [`/proc/${pid}/net/tcp`, `/proc/${pid}/net/tcp6`].flatMap((file) =>
    readFileSync(file, "utf8").split("\n").slice(1).flatMap((line) => {
      const f = line.trim().split(/\s+/)
      return f.length > 9 && f[3] === "0A" && inodes.has(f[9]!) ? [parseInt(f[1]!.split(":")[1]!, 16)] : []
    })
  )
}

/** Every file and folder under `dir`, relative to it. */
const filesUnder = (dir: string): Array<string> => readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()

const work = mkdtempSync(join(tmpdir(), "fos-machine-"))
afterAll(() => {
  killAllFos()
  rmSync(work, { recursive: true, force: true })
})

describe.skipIf(process.platform !== "linux")("what fos leaves on the machine (Linux: the listing reads /proc)", () => {
  describe("an embedded engine, in a host process of its own", () => {
    const folders = { home: join(work, "home"), cache: join(work, "cache"), tmp: join(work, "tmp"), cwd: join(work, "cwd") }
    const chosen = join(work, "chosen")
    let run: { code: number | null; stdout: string; stderr: string }
    beforeAll(async () => {
      for (const folder of [...Object.values(folders), chosen]) mkdirSync(folder)
      const seedFile = join(work, "seed.json")
      writeFileSync(seedFile, JSON.stringify(seed))
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: folders.home, XDG_CACHE_HOME: folders.cache, TMPDIR: folders.tmp, NODE_OPTIONS: nodeOptions }
      delete env.NODE_COMPILE_CACHE
      run = await new Promise((done, fail) => {
        const child = spawn(process.execPath, [resolve(repoRoot, "test/fixtures/embeddedHost.ts"), seedFile, keys.sandbox, chosen], {
          cwd: folders.cwd,
          env,
          stdio: ["ignore", "pipe", "pipe"]
        })
        let stdout = ""
        let stderr = ""
        child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c))
        child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c))
        child.on("error", fail)
        child.on("exit", (code) => done({ code, stdout, stderr }))
      })
      expect(run.code, run.stderr).toBe(0)
    }, 120_000)

    it("listens on no TCP port: memory, a new PGlite directory's migrations, a restart, the SQL client", () => {
      expect(listensIn(run.stderr)).toEqual([])
      expect(JSON.parse(run.stdout)).toEqual({ listening: [] })
    })

    it("writes nothing outside the directory its host chose (HOME, XDG_CACHE_HOME, TMPDIR and its working directory stay empty)", () => {
      for (const folder of Object.values(folders)) expect(filesUnder(folder), folder).toEqual([])
      expect(readdirSync(chosen).sort()).toEqual(["client", "store"])
      for (const store of ["client", "store"]) expect(filesUnder(join(chosen, store))).toContain("PG_VERSION")
    })
  })

  describe("fos serve on a new PGlite directory", () => {
    it("listens on its HTTP port only, and keeps the template cluster in the user's cache", async () => {
      const cache = join(work, "serve-cache")
      mkdirSync(cache)
      const server = await startFos(["--port", "0", "--store", join(work, "serve-store"), "--seed", writeSeed()], {
        NODE_OPTIONS: nodeOptions,
        XDG_CACHE_HOME: cache
      })
      const port = Number(new URL(server.origin).port)
      expect((await httpCall(server.origin, "/sandbox/v2/customers", { key: keys.sandbox })).status).toBe(200)
      expect(listeningPorts(server.child.pid!)).toEqual([port])
      await server.stop()
      expect(listensIn(server.stderr()).map((a) => a.port)).toEqual([port])
      expect(readdirSync(join(cache, "fos"))).toEqual([expect.stringMatching(/^pglite-cluster-/)])
    }, 120_000)
  })
})

const writeSeed = (): string => {
  const file = join(work, "serve-seed.json")
  writeFileSync(file, JSON.stringify(seed))
  return file
}
