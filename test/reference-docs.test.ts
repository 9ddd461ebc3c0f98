/**
 * The README and docs/ are reference: they say what is true now. When and in which piece of work something was done
 * is git's history and CHANGELOG.md's, so no tracked file but the changelog names an issue, a session or a date of
 * work, in prose or in a comment; and the README and the benches' page stay short enough to be read.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..")
const files = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0")
const tracked = files
  .filter((file) => /\.(ts|tsx|js|mjs|cjs|md|sh|sql|yaml|yml)$|^Containerfile$|^\.ci\/run$/.test(file))
  // This file's own samples are the one place the words may stand.
  .filter((file) => file !== "CHANGELOG.md" && file !== "test/reference-docs.test.ts" && !file.startsWith("packages/http/src/InspectorAssets"))

/** Words that tell when, or in which piece of work, something was done. */
const history: ReadonlyArray<{ readonly name: string; readonly pattern: RegExp }> = [
  { name: "an issue number", pattern: /\bissues? #?\d+\b/i },
  // ("this session" is a signer's, in the signing domain.)
  { name: "a session of work", pattern: /\b(?:sessions? \d+|(?:last|earlier|previous|next) session)\b/i },
  { name: "a date of work", pattern: /\b(?:until|before|since|after|as of|measured|on) 20\d\d-[01]\d-[0-3]\d\b(?!T)/i }
]

const linesOf = (file: string) => readFileSync(join(root, file), "utf8").split("\n")

describe("docs and comments", () => {
  it("name no issue, session or date of work", () => {
    expect(tracked.length).toBeGreaterThan(300)
    const found = tracked.flatMap((file) =>
      linesOf(file).flatMap((line, i) => history.filter((h) => h.pattern.test(line)).map((h) => `${file}:${i + 1}: ${h.name}: ${line.trim()}`))
    )
    expect(found).toEqual([])
  })

  it("the test would find each kind", () => {
    for (const [sample, kind] of [["(issue 39)", 0], ["as the last session found", 1], ["measured 2026-11-29 on", 2], ["until 2026-11-23 fan-out", 2]] as const) {
      expect(history[kind]!.pattern.test(sample), sample).toBe(true)
    }
    // A date that is data is not a date of work: a timestamp, a clock's start, an incorporation date.
    for (const sample of ["starts at 2026-03-03T09:00:00.000Z", "incorporationDate: \"2020-01-15\"", "Tuesday 2026-03-03 09:00 UTC"]) {
      expect(history.some((h) => h.pattern.test(sample)), sample).toBe(false)
    }
  })
})

/** GitHub's anchor of a heading: lower case, punctuation but hyphens dropped, spaces as hyphens. */
const anchorOf = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-")

describe("links between the docs", () => {
  it("each relative link of the README and docs/ names a file that exists, and a heading of it", () => {
    const pages = tracked.filter((file) => file === "README.md" || (file.startsWith("docs/") && file.endsWith(".md")))
    const anchors = new Map(pages.map((page) => [page, new Set(linesOf(page).flatMap((line) => /^#{1,6} (.*)$/.exec(line)?.[1] ?? []).map(anchorOf))]))
    const broken = pages.flatMap((page) =>
      [...readFileSync(join(root, page), "utf8").matchAll(/\]\(([^)\s]+)\)/g)].flatMap(([, target]) => {
        if (/^[a-z]+:/.test(target!)) return []
        const [path, anchor] = target!.split("#") as [string, string | undefined]
        const file = path === "" ? page : join(page, "..", path).replace(/^\.\//, "")
        if (!files.includes(file) && !files.some((t) => t.startsWith(`${file.replace(/\/$/, "")}/`))) return [`${page}: ${target} (no such file)`]
        if (anchor !== undefined && anchors.has(file) && !anchors.get(file)!.has(anchor)) return [`${page}: ${target} (no such heading)`]
        return []
      })
    )
    expect(broken).toEqual([])
  })

  // Comments and docs name a section as `docs/decisions.md, "Heading"`, or link it as `decisions.md#anchor`; a heading
  // renamed, merged or moved to another page must not leave them pointing at nothing. A page is known by its file name,
  // so docs/decisions/README.md, whose name is the top README's, is left out.
  const sectioned = new Map(
    tracked
      .filter((file) => file.startsWith("docs/") && file.endsWith(".md") && file !== "docs/decisions/README.md")
      .map((file) => [file.slice(file.lastIndexOf("/") + 1, -".md".length), file])
  )
  it("each section a source or doc names on a page of docs/, by its heading or its anchor, is a heading there", () => {
    expect(sectioned.size).toBeGreaterThan(40)
    const headings = new Map([...sectioned].map(([page, file]) => [page, linesOf(file).flatMap((line) => /^#{1,6} (.*)$/.exec(line)?.[1] ?? [])]))
    const pages = [...sectioned.keys()].map((page) => page.replace(/[.-]/g, "\\$&")).join("|")
    const reference = new RegExp(`\\b(${pages})\\.md\\)?(?:, | \\()"([^"]+)"|\\b(${pages})\\.md#([\\w-]+)`, "g")
    const named = tracked.flatMap((file) => {
      // A name may run over a comment's line break: " * ", "// " and "# " at the next line's start are not part of it.
      const text = readFileSync(join(root, file), "utf8").replace(/\s*\n\s*(?:\*(?!\/)|\/\/|#(?!#))?\s*/g, " ")
      return [...text.matchAll(reference)].map(([, page, name, anchorPage, anchor]) => ({ file, page: (page ?? anchorPage)!, name, anchor }))
    })
    const broken = named.flatMap(({ file, page, name, anchor }) => {
      // A heading may add a parenthesis or, after a colon, its endpoint to the name it is known by: "The world model's
      // review (no simulate call)", "Recent requests: `GET /sandbox/v2/simulate/requests`".
      const known = (heading: string) => heading === name || heading.startsWith(`${name} (`) || heading.startsWith(`${name}: `)
      const found = headings.get(page)!.some((heading) => (name !== undefined ? known(heading) : anchorOf(heading) === anchor))
      return found ? [] : [`${file}: ${page}.md ${name !== undefined ? `"${name}"` : `#${anchor}`}`]
    })
    expect(named.length).toBeGreaterThan(60)
    expect(broken).toEqual([])
  })

  it("reads a heading's anchor as GitHub makes it", () => {
    expect(anchorOf("The host's Effect")).toBe("the-hosts-effect")
    expect(anchorOf("Getting started with @fos/testing")).toBe("getting-started-with-fostesting")
    expect(anchorOf("`fos serve`, spawn to first 200")).toBe("fos-serve-spawn-to-first-200")
  })
})

describe("lengths", () => {
  it("the README is at most 200 lines, and docs/performance.md at most 400", () => {
    expect(linesOf("README.md").length).toBeLessThanOrEqual(200 + 1)
    expect(linesOf("docs/performance.md").length).toBeLessThanOrEqual(400 + 1)
  })
})
