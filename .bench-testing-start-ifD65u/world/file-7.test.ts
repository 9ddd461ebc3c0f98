import { expect, it } from "vitest"
import { useWorld } from "@fos/testing/vitest"
const world = await useWorld()
it("has a world", () => expect(world.organizationId).toMatch(/^org_/))
