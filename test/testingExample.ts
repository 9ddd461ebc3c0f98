/**
 * The README's "Testing with fos" example across workers: its `ts title="<file>"` blocks, which together are one
 * Vitest project (a config, a global set-up, a test file). test/readme.test.ts runs the README's single-file `ts`
 * blocks; these are run by test/testing-package.test.ts from the sources and by test/packages.test.ts from the
 * installed tarballs, each with 4 workers in parallel.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"

const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8")

/** The README's titled `ts` blocks, by file name. */
export const testingExample = (): Record<string, string> =>
  Object.fromEntries([...readme.matchAll(/^```ts title="([^"]+)"\n([\s\S]*?)^```$/gm)].map((m) => [m[1]!, m[2]!]))

/**
 * The README's test file, and after it a hook that reports which worker ran it in which organization: one line
 * `<VITEST_POOL_ID> <organization id>` appended to organizations.txt in the working directory. Imports are hoisted,
 * so they may come last; the file must name its world `world`.
 */
export const withOrganizationReport = (testFile: string): string => {
  if (!/^const world = await useWorld/m.test(testFile)) throw new Error("the README's test file no longer names its world `world`")
  return `${testFile}
import { appendFileSync as reportAppend } from "node:fs"
import { afterAll as reportAfterAll } from "vitest"
reportAfterAll(() => reportAppend("organizations.txt", \`\${process.env.VITEST_POOL_ID} \${world.organizationId}\\n\`))
`
}
