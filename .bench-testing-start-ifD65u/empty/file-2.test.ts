import { expect, it } from "vitest"
it("passes", () => expect(1).toBe(1))
