import { createConfig, lintFromString } from "@redocly/openapi-core"
import { readFileSync } from "node:fs"
const config = await createConfig({ extends: ["recommended"] })
const problems = await lintFromString({ source: readFileSync(process.argv[2]!, "utf8"), absoluteRef: "/tmp/x.json", config } as any)
const by: Record<string, number> = {}
for (const p of problems) by[`${p.severity} ${p.ruleId}`] = (by[`${p.severity} ${p.ruleId}`] ?? 0) + 1
console.log(by)
for (const p of problems.filter((p) => p.severity === "error").slice(0, 8)) console.log(p.ruleId, p.message, JSON.stringify(p.location[0]?.pointer))
