import { defineConfig } from "vitest/config"

/**
 * The repository's tests run the packages' TypeScript sources: the "@fos/source" export condition points each
 * workspace package at its src/ instead of the dist/ an installed package has. Node processes the tests start
 * inherit it through NODE_OPTIONS (and Deno through DENO_CONDITIONS); test/packages.test.ts clears both to check
 * the packages as a project outside this repository gets them.
 */
const sourceCondition = "@fos/source"

export default defineConfig({
  resolve: { conditions: [sourceCondition, "module", "node", "development|production"] },
  ssr: { resolve: { conditions: [sourceCondition, "module", "node", "development|production"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "adapters/*/test/**/*.test.ts", "test/**/*.test.ts"],
    env: { NODE_OPTIONS: `--conditions=${sourceCondition}`, DENO_CONDITIONS: sourceCondition },
    // Every answer a test file's requests get through the test helpers is checked against the OpenAPI document.
    setupFiles: ["test/responseSchemas.setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
