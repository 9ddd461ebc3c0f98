import { availableParallelism } from "node:os"
import { join } from "node:path"
import { defineConfig } from "vitest/config"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * The repository's tests run the packages' TypeScript sources: the "@fos/source" export condition points each
 * workspace package at its src/ instead of the dist/ an installed package has. Node processes the tests start
 * inherit it through NODE_OPTIONS (and Deno through DENO_CONDITIONS); test/packages.test.ts clears both to check
 * the packages as a project outside this repository gets them.
 */
const sourceCondition = "@fos/source"

/**
 * The files that take longest (docs/performance.md, "npm test time"), longest first. Most of their time is spent
 * waiting on processes they start (`fos serve`, `fos` commands, Chromium, tsc, Bun and Deno), so on a 2-core
 * machine they run beside the rest: started first, they do not become the tail of the run. A file missing from the
 * list only runs in vitest's own order (larger files first, or by the last run's durations when it has them).
 */
const slowFirst = [
  "test/durability.test.ts",
  "test/packages.test.ts",
  "test/readme.test.ts",
  "test/snapshots.test.ts",
  "test/cli.test.ts",
  "test/inspector-browser.test.ts",
  "test/server.test.ts",
  "adapters/sql/test/Migrations.test.ts",
  "test/advance-crash.test.ts",
  "test/forks.test.ts",
  "test/snapshot-files.test.ts",
  "test/openapi.test.ts",
  "test/runtimes.test.ts",
  "test/testing-repro.test.ts",
  "test/bank.test.ts",
  "adapters/sql/test/SqlStore.test.ts",
  "test/testing-package.test.ts",
  "test/stores-doc.test.ts",
  "test/webhooks-server.test.ts",
  "test/docs-page.test.ts",
  "test/determinism.test.ts",
  "test/store-silent.test.ts",
  "test/cli-flags.test.ts",
  "test/service.test.ts",
  "test/reproducible.test.ts",
  "test/orders.test.ts",
  "test/documents.test.ts",
  "test/reset.test.ts",
  "adapters/sql/test/ImageStore.test.ts",
  "test/otlp-export.test.ts"
].map((file) => join(import.meta.dirname, file))

class SlowFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const sorted = await super.sort(files)
    const rank = (spec: TestSpecification) => {
      const at = slowFirst.indexOf(spec.moduleId)
      return at === -1 ? slowFirst.length : at
    }
    return sorted.map((spec, at) => ({ spec, at })).sort((a, b) => rank(a.spec) - rank(b.spec) || a.at - b.at).map(({ spec }) => spec)
  }
}

export default defineConfig({
  resolve: { conditions: [sourceCondition, "module", "node", "development|production"] },
  ssr: { resolve: { conditions: [sourceCondition, "module", "node", "development|production"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "adapters/*/test/**/*.test.ts", "test/**/*.test.ts"],
    // The image's test builds it for minutes: `npm run test:container`.
    exclude: ["**/node_modules/**", "test/container/**"],
    env: {
      NODE_OPTIONS: `--conditions=${sourceCondition}`,
      DENO_CONDITIONS: sourceCondition,
      // Node processes the tests start (over a hundred `fos serve` and `fos` commands) keep V8's compiled code of
      // the sources they load, so each start after the first compiles less: about 0.85 s of CPU to start
      // `fos serve --store memory` instead of 1.5 s. Node checks each entry against the source it was made from.
      NODE_COMPILE_CACHE: join(import.meta.dirname, "node_modules/.cache/node-compile-cache")
    },
    // vitest's default is one worker fewer than the cores: one worker on a 2-core CI machine, where most of the
    // slow files wait on processes they started. One more than the cores keeps them busy while a file waits: on
    // CI's 2 cores, three workers ran the suite in 437 s where two took 601 s.
    // Every answer a test file's requests get through the test helpers is checked against the OpenAPI document.
    setupFiles: ["test/responseSchemas.setup.ts"],
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: SlowFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
