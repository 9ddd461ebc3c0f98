/**
 * What the benches share: their tables go into docs/performance.md between `<!-- bench:<name>:start -->` and
 * `<!-- bench:<name>:end -->` (markers count only on a line of their own, so prose may mention them), and the
 * HTTP benches serve one organization whose rate limit is raised so it never throttles them.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"

const performanceDoc = resolve(import.meta.dirname, "..", "docs", "performance.md")

/** Replaces the `name` section of docs/performance.md with `markdown`, or appends it. */
export const recordSection = (name: string, markdown: string): void => {
  const block = `<!-- bench:${name}:start -->\n${markdown}\n<!-- bench:${name}:end -->`
  const text = existsSync(performanceDoc) ? readFileSync(performanceDoc, "utf8") : "# Performance\n\nWritten by `npm run bench`.\n"
  const existing = new RegExp(`^<!-- bench:${name}:start -->$[\\s\\S]*?^<!-- bench:${name}:end -->$`, "m")
  writeFileSync(performanceDoc, existing.test(text) ? text.replace(existing, () => block) : `${text.replace(/\n*$/, "")}\n\n${block}\n`)
}

/** The benches' seed: one organization with `key`, its rate limit out of the way. */
export const benchSeed = (key: string) => ({
  organizations: [{
    id: "org_bench",
    name: "Bench",
    status: "active",
    rateLimit: { sustainedPerSecond: 1_000_000, burst: 1_000_000 },
    users: [{ id: "usr_bench", email: "bench@example.com", role: "admin" }],
    apiKeys: [{ key, access: "read_write", createdBy: "usr_bench" }]
  }]
})

/** Writes the benches' seed file (`benchSeed`) into `dir`. */
export const writeBenchSeed = (dir: string, key: string): string => {
  const seedPath = join(dir, "seed.json")
  writeFileSync(seedPath, JSON.stringify(benchSeed(key)))
  return seedPath
}

/**
 * What a recorded figure was measured on: the commit checked out (with "+ changes" when the tree differs from it).
 * The figures say which build they measure, not when: the history of the figures is git's.
 */
export const measuredAt = (cwd = resolve(import.meta.dirname, "..")): string => {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no", "--", ":!docs"], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim() !== ""
    return `commit ${sha}${dirty ? " + changes" : ""}`
  } catch {
    return "a tree outside git"
  }
}
