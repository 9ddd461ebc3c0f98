import { defineConfig } from "vitest/config"

/** `npm run test:container`: the image's test alone (docs/container.md), apart from `npm test`. */
export default defineConfig({
  test: {
    include: ["test/container/**/*.test.ts"],
    root: new URL("../..", import.meta.url).pathname,
    fileParallelism: false
  }
})
