import { defineConfig } from "vitest/config"
const conditions = ["@fos/source", "module", "node", "development|production"]
export default defineConfig({
  resolve: { conditions }, ssr: { resolve: { conditions } }, environments: { __vitest__: { resolve: { conditions } } },
  test: { include: ["*.test.ts"], testTimeout: 60_000, hookTimeout: 60_000 }
})
