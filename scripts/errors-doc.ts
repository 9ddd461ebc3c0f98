/**
 * Writes docs/errors.md, the reference entry of every synchronous error code, from the catalog. The entries and
 * both renderings (this markdown, and the HTML page the server serves at /docs/errors) are in
 * packages/contract/src/kernel/ErrorReference.ts; each code's anchor is the fragment of its `docs` URL, so the link
 * in a problem body lands on its entry. Run with `node scripts/errors-doc.ts`; a test checks the file is up to date.
 */
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { renderErrorsMarkdown } from "../packages/contract/src/kernel/ErrorReference.ts"
import { isMain } from "./isMain.ts"

export { anchorOf } from "../packages/contract/src/kernel/ErrorReference.ts"

/** Where the generated file lives. */
export const errorsDocPath: string = fileURLToPath(new URL("../docs/errors.md", import.meta.url))

/** The full text of docs/errors.md. */
export const renderErrorsDoc = (): string => renderErrorsMarkdown()

if (isMain(import.meta.url)) {
  writeFileSync(errorsDocPath, renderErrorsDoc())
  console.log(`wrote ${errorsDocPath}`)
}
