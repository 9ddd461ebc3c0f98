/**
 * docs/testing.md's "Getting started with @fos/testing" example across workers: its `ts title="<file>"` blocks,
 * which together are one Vitest project (a config, a global set-up, a test file). test/readme.test.ts runs the
 * single-file `ts` blocks; these are run by test/testing-package.test.ts from the sources and by test/packages.test.ts from the
 * installed tarballs, each with 4 workers in parallel.
 */
import { blocksOf } from "./guides.ts"

/** The guides' titled `ts` blocks, by file name. */
export const testingExample = (): Record<string, string> =>
  Object.fromEntries(blocksOf("ts").flatMap((b) => {
    const title = /^ title="([^"]+)"$/.exec(b.info)?.[1]
    return title === undefined ? [] : [[title, b.code] as const]
  }))

/**
 * The example's test file, and after it a hook that reports which worker ran it in which organization: one line
 * `<VITEST_POOL_ID> <organization id>` appended to organizations.txt in the working directory. Imports are hoisted,
 * so they may come last; the file must name its world `world`.
 */
export const withOrganizationReport = (testFile: string): string => {
  if (!/^const world = await useWorld/m.test(testFile)) throw new Error("docs/testing.md's test file no longer names its world `world`")
  return `${testFile}
import { appendFileSync as reportAppend } from "node:fs"
import { afterAll as reportAfterAll } from "vitest"
reportAfterAll(() => reportAppend("organizations.txt", \`\${process.env.VITEST_POOL_ID} \${world.organizationId}\\n\`))
`
}
