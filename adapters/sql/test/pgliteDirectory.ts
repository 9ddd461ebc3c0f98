/**
 * A PGlite directory of its own for a test, already holding an empty database cluster, so the test starts where
 * a new directory starts after PGlite's initdb, without paying for it.
 *
 * Why: PGlite runs initdb when it opens a directory with no cluster in it, and that is most of what opening a new
 * store costs (about 4.8 s of CPU against 0.25 s to open an existing cluster, on the development VM). The suite
 * opened over forty new directories. Here initdb runs once, into the template `fos serve` copies a new store from
 * too (`pgliteClusterTemplate` in src/Stores.ts: per PGlite version, in the user's cache), and each test gets a copy
 * of it (about 0.4 s).
 *
 * A copy is the cluster initdb would make: the same files, and fos's migrations still run on it when the store
 * opens, from the first, as on any new store. What it is not is a directory fos has never seen the cluster of:
 * `fos serve` says "creating" a PGlite store only when the directory has no PG_VERSION, so a test of that start
 * line, or of initdb itself, takes a plain new directory instead.
 */
import { cpSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pgliteClusterTemplate, userTemplateCache } from "../src/Stores.ts"

const template = async (): Promise<string> => {
  const made = await pgliteClusterTemplate(userTemplateCache())
  if (made === undefined) throw new Error("no PGlite template cluster: the user's cache directory cannot be written")
  return made
}

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
