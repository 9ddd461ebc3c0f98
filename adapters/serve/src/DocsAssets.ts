/**
 * Swagger UI's files for the reference page at `/docs` (the page itself is @fos/http's Docs.ts). swagger-ui-dist is
 * a dependency of this package, the server's, and of no embedding package: it is 12.5 MB of browser bundle an
 * embedded engine never serves, and it brings @scarf/scarf, whose postinstall script reports the install.
 */
import { type DocsAssets, docsAssetNames } from "@fos/http"

/**
 * Reads `docsAssetNames` from the installed swagger-ui-dist with `read`, the runtime's file reader (on Node, Bun
 * and Deno alike: `(url) => readFileSync(url)` from `node:fs`). The package is found by module resolution from
 * this package (`import.meta.resolve`, the same on the three runtimes), so this works wherever npm installed it.
 */
export const readDocsAssets = (read: (file: URL) => Uint8Array): DocsAssets => {
  const root = import.meta.resolve("swagger-ui-dist/package.json")
  return Object.fromEntries(docsAssetNames.map((name) => [name, read(new URL(name, root))])) as unknown as DocsAssets
}
