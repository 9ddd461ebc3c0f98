/**
 * `fos` works where the README says it does: `npx fos` in the repository, on the Node the repository pins; an
 * `npm install` that leaves the checkout as it was; and on a Node older than the engines range, one line saying
 * which Node is needed and how to get it.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join, resolve } from "node:path"
import { describe, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "..")
const pinnedNode = join(root, "node_modules", ".bin", "node")
const engines = (JSON.parse(readFileSync(join(root, "adapters/node/package.json"), "utf8")) as { engines: { node: string } }).engines.node
const [neededMajor, neededMinor] = /^>=(\d+)\.(\d+)$/.exec(engines)!.slice(1).map(Number) as [number, number]
const supported = (version: string) => {
  const [major, minor] = version.replace(/^v/, "").split(".").map(Number) as [number, number]
  return major > neededMajor || (major === neededMajor && minor >= neededMinor)
}

/** The PATH a reader's shell has in the repository: without the node_modules/.bin a test runner may have put first. */
const readerPath = (process.env.PATH ?? "").split(delimiter).filter((dir) => !dir.includes("node_modules")).join(delimiter)

describe("fos in the repository", { timeout: 120_000 }, () => {
  it("npx fos runs the command line on the pinned Node", () => {
    const result = spawnSync("npx", ["fos", "--version"], { cwd: root, encoding: "utf8", env: { ...process.env, PATH: readerPath } })
    expect(result.status, result.stderr).toBe(0)
    expect(result.stdout).toBe(`fos ${(JSON.parse(readFileSync(join(root, "adapters/serve/package.json"), "utf8")) as { version: string }).version}\n`)
    expect(result.stderr).toBe("")
    // The Node it ran on: the one package.json pins, whatever Node is first on the reader's PATH.
    const node = spawnSync("npx", ["node", "--version"], { cwd: root, encoding: "utf8", env: { ...process.env, PATH: readerPath } })
    const pinned = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { devDependencies: Record<string, string> }).devDependencies.node
    expect(node.stdout.trim()).toBe(`v${pinned}`)
  })

  it("npm install on a fresh checkout leaves it as it was: the lock agrees with every package's manifest", () => {
    // What npm writes to the checkout is the lock, made from the manifests: they alone are copied, to a repository of
    // their own, and the lock is rebuilt from them without fetching or installing anything.
    const dir = mkdtempSync(join(tmpdir(), "fos-lock-"))
    try {
      const tracked = execFileSync("git", ["ls-files", "package.json", "package-lock.json", "*/package.json"], { cwd: root, encoding: "utf8" })
        .split("\n")
        .filter((file) => file !== "" && (dirname(file) === "." || /^(packages|adapters)\/[^/]+$/.test(dirname(file))))
      expect(tracked).toContain("adapters/node/package.json")
      for (const file of tracked) cpSync(join(root, file), join(dir, file))
      const git = (...args: Array<string>) => execFileSync("git", ["-c", "user.name=fos", "-c", "user.email=fos@test.invalid", ...args], { cwd: dir, encoding: "utf8" })
      git("init", "-q")
      git("add", "-A")
      git("commit", "-qm", "manifests")
      const install = spawnSync("npm", ["install", "--package-lock-only", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"], {
        cwd: dir,
        encoding: "utf8",
        env: { ...process.env, npm_config_loglevel: "error" }
      })
      expect(install.status, install.stderr).toBe(0)
      expect(git("status", "--porcelain"), git("diff")).toBe("")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("fos on an unsupported Node", { timeout: 60_000 }, () => {
  const needs = new RegExp(`^fos: needs Node ${neededMajor}\\.${neededMinor} or later, not v20\\.\\d+\\.\\d+: .*npx fos.*\\n$`)

  it("every entry point says which Node it needs and how to get it, in one line", () => {
    // The pinned Node, told it is Node 20 before fos.js runs: what a user's older Node sees, on any machine.
    const older = `data:text/javascript,${encodeURIComponent(`Object.defineProperty(process, "version", { value: "v20.20.2" }); Object.defineProperty(process.versions, "node", { value: "20.20.2" })`)}`
    for (const args of [["serve", "--store", "memory", "--port", "0"], ["--version"], ["orgs", "list"]]) {
      const result = spawnSync(pinnedNode, ["--import", older, "adapters/node/bin/fos.js", ...args], { cwd: root, encoding: "utf8", timeout: 30_000 })
      expect(result.status, result.stderr).toBe(1)
      expect(result.stdout).toBe("")
      expect(result.stderr).toMatch(needs)
    }
    const start = spawnSync("npm", ["start", "--", "--store", "memory", "--port", "0"], { cwd: root, encoding: "utf8", timeout: 30_000, env: { ...process.env, NODE_OPTIONS: `--import=${older}`, npm_config_loglevel: "silent" } })
    expect(start.stderr).toMatch(needs)
  })

  it("so does a real older Node, where one is on the PATH", (context) => {
    const olderNodes = readerPath.split(delimiter).flatMap((dir) => {
      const version = spawnSync(join(dir, "node"), ["--version"], { encoding: "utf8" })
      return version.status === 0 && !supported(version.stdout.trim()) ? [{ node: join(dir, "node"), version: version.stdout.trim() }] : []
    })
    if (olderNodes.length === 0) return context.skip()
    for (const { node, version } of olderNodes) {
      const result = spawnSync(node, ["adapters/node/bin/fos.js", "serve", "--store", "memory", "--port", "0"], { cwd: root, encoding: "utf8", timeout: 30_000 })
      expect(result.status, result.stderr).toBe(1)
      expect(result.stderr).toBe(`fos: needs Node ${neededMajor}.${neededMinor} or later, not ${version}: in the repository, npx fos and npm start run the Node 24 that npm install puts in node_modules\n`)
    }
  })
})

