/**
 * Generates docs/errors.md, the reference entry of every synchronous error code, from the ErrorCatalog.
 *
 * Each code gets an anchor equal to the fragment of its `docs` URL (the lower-case code), so the link in a problem
 * body lands on its entry. Run with `node scripts/errors-doc.ts`; a test checks the file is up to date.
 */
import { realpathSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { docsUrl, ErrorCatalog, type ErrorCode } from "../packages/contract/src/kernel/Errors.ts"

/** Where the generated file lives. */
export const errorsDocPath: string = fileURLToPath(new URL("../docs/errors.md", import.meta.url))

/** The anchor of a code's entry: the fragment of its docs URL. */
export const anchorOf = (code: ErrorCode): string => new URL(docsUrl(code)).hash.slice(1)

/** The full text of docs/errors.md. */
export const renderErrorsDoc = (): string => {
  const codes = Object.keys(ErrorCatalog) as Array<ErrorCode>
  const lines: Array<string> = [
    "# Error codes",
    "",
    "<!-- Generated from packages/core/src/ErrorCatalog.ts by scripts/errors-doc.ts. Do not edit by hand. -->",
    "",
    "Every error is an RFC 9457 problem object. Clients match on `type`, the stable code below; the title may change.",
    "",
    "| Code | HTTP status | Title |",
    "|---|---|---|",
    ...codes.map((code) => `| [${code}](#${anchorOf(code)}) | ${ErrorCatalog[code].status} | ${ErrorCatalog[code].title} |`),
    ""
  ]
  for (const code of codes) {
    const spec = ErrorCatalog[code]
    lines.push(
      `<a id="${anchorOf(code)}"></a>`,
      "",
      `## ${code}`,
      "",
      `- **HTTP status:** ${spec.status}`,
      `- **Title:** ${spec.title}`,
      `- **Resolution:** ${spec.resolution}`,
      ""
    )
  }
  return lines.join("\n")
}

const isMain = (): boolean => {
  const entry = process.argv[1]
  if (entry === undefined) return false
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}

if (isMain()) {
  writeFileSync(errorsDocPath, renderErrorsDoc())
  console.log(`wrote ${errorsDocPath}`)
}
