/** Whether the module at `moduleUrl` is the script Node was started with (not one a test imported). */
import { realpathSync } from "node:fs"
import { fileURLToPath } from "node:url"

export const isMain = (moduleUrl: string): boolean => {
  const entry = process.argv[1]
  if (entry === undefined) return false
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(moduleUrl))
  } catch {
    return false
  }
}
