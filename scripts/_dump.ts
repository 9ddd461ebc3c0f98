import { Api, openApiDocument } from "@fos/contract"
import { writeFileSync } from "node:fs"
for (const env of ["sandbox", "live"] as const) writeFileSync(`/tmp/oa/${env}.json`, JSON.stringify(openApiDocument(Api as any, env), null, 2))
