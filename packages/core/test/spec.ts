/**
 * The spec, for tests that check the code against it: found beside the repository (../shared/spec from the repo
 * root, or FOS_SPEC), and read section by section.
 */
import { existsSync, readFileSync } from "node:fs"
import * as path from "node:path"

const specRelative = path.join("shared", "spec", "financial-operations-api-v2.md")

const findSpec = (): string => {
  const override = process.env.FOS_SPEC
  if (override !== undefined && override !== "") return override
  let dir = import.meta.dirname
  for (;;) {
    const candidate = path.join(dir, specRelative)
    if (existsSync(candidate)) return candidate
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error(`cannot find ${specRelative} above ${import.meta.dirname}`)
    dir = parent
  }
}

/** The whole spec, as markdown. */
export const specText: string = readFileSync(findSpec(), "utf8")

/** The lines of one section (`### heading` or `## heading`), up to the next heading of level 3 or above. */
export const section = (heading: string, markdown: string = specText): Array<string> => {
  const lines = markdown.split(/\r?\n/)
  const start = lines.findIndex((l) => l.trim() === heading)
  if (start < 0) throw new Error(`section ${heading} not found in the spec`)
  const rest = lines.slice(start + 1)
  const end = rest.findIndex((l) => /^#{1,3} /.test(l))
  return end < 0 ? rest : rest.slice(0, end)
}
