/**
 * A PGlite directory of its own for a test, already holding an empty database cluster, so the test starts where
 * a new directory starts after PGlite's initdb, without paying for it.
 *
 * Why: PGlite runs initdb when it opens a directory with no cluster in it, and that is most of what opening a new
 * store costs (about 4.8 s of CPU against 0.25 s to open an existing cluster, on the development VM). The suite
 * opened over forty new directories. Here initdb runs once, into a template kept under node_modules/.cache (per
 * PGlite version, so `npm ci` or an upgrade makes a new one), and each test gets a copy of it (about 0.4 s).
 *
 * A copy is the cluster initdb would make: the same files, and fos's migrations still run on it when the store
 * opens, from the first, as on any new store. What it is not is a directory fos has never seen the cluster of:
 * `fos serve` says "creating" a PGlite store only when the directory has no PG_VERSION, so a test of that start
 * line, or of initdb itself, takes a plain new directory instead.
 */
import { PGlite } from "@electric-sql/pglite"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

const repoRoot = resolve(import.meta.dirname, "../../..")

const pgliteVersion = (JSON.parse(readFileSync(join(repoRoot, "node_modules/@electric-sql/pglite/package.json"), "utf8")) as { version: string }).version

const templateDir = join(repoRoot, "node_modules/.cache", `fos-pglite-cluster-${pgliteVersion}`)

let made: Promise<string> | undefined

/**
 * The template cluster, made on first use. Made in a directory of its own and renamed into place, so a process that
 * finds it finds it whole; two test workers that both miss it each make one, and the second rename loses harmlessly.
 */
const template = (): Promise<string> =>
  made ??= (async () => {
    if (existsSync(join(templateDir, "PG_VERSION"))) return templateDir
    const building = `${templateDir}.building-${process.pid}`
    rmSync(building, { recursive: true, force: true })
    mkdirSync(building, { recursive: true })
    const db = await PGlite.create(building)
    await db.close()
    try {
      renameSync(building, templateDir)
    } catch {
      rmSync(building, { recursive: true, force: true })
    }
    if (!existsSync(join(templateDir, "PG_VERSION"))) throw new Error(`no PGlite template cluster at ${templateDir}`)
    return templateDir
  })()

/** A new directory under the system's temporary directory, named after `label`, holding an empty cluster. */
export const freshPgliteDirectory = async (label: string): Promise<string> => {
  const source = await template()
  const dir = mkdtempSync(join(tmpdir(), `fos-${label}-`))
  cpSync(source, dir, { recursive: true })
  return dir
}

/** The same, at `dir` (which must not exist yet or be empty): for a test that names its store's path itself. */
export const pgliteDirectoryAt = async (dir: string): Promise<string> => {
  const source = await template()
  cpSync(source, dir, { recursive: true })
  return dir
}
