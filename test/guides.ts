/**
 * The README and the guides in docs/ that carry its commands: every `ts` and `sh` block of these files runs as
 * written, or is accounted for (test/readme.test.ts). A block fenced `ts fragment` is a piece of code shown inside
 * a longer explanation, not a program, and is not run.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")

export const guideFiles = ["README.md", "docs/getting-started.md", "docs/serving.md", "docs/operating.md", "docs/embedding.md", "docs/testing.md"] as const

export interface Guide {
  readonly file: string
  readonly text: string
}

export const guides: ReadonlyArray<Guide> = guideFiles.map((file) => ({ file, text: readFileSync(join(root, file), "utf8") }))

export const guide = (file: (typeof guideFiles)[number]): string => guides.find((g) => g.file === file)!.text

export interface Block {
  readonly file: string
  /** The line its fence opens on. */
  readonly line: number
  /** What follows the language on the fence line (` title="…"`, ` fragment`, or nothing). */
  readonly info: string
  readonly code: string
}

/** Every block fenced with `language`, in the order of `guideFiles`, then of their lines. */
export const blocksOf = (language: "ts" | "sh"): ReadonlyArray<Block> =>
  guides.flatMap(({ file, text }) =>
    [...text.matchAll(new RegExp(`^\`\`\`${language}(.*)\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map((m) => ({
      file,
      line: text.slice(0, m.index).split("\n").length,
      info: m[1]!,
      code: m[2]!
    }))
  )
