/**
 * Child processes for the store contract's kill case, on Node (node:child_process): the child (child.ts) opens the
 * store from the module it is given and commits in a loop, writing each acknowledged commit's number on a line of
 * its stdout; the parent reads them and kills it.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { Committer, Processes } from "@fos/core/store-contract"

/** The child script beside this module: child.ts in this repository, child.js in the package. */
const childScript = fileURLToPath(new URL(import.meta.url.endsWith(".ts") ? "./child.ts" : "./child.js", import.meta.url))

export const nodeProcesses: Processes = {
  startCommitter: ({ commits, module, place }): Committer => {
    const child = spawn(process.execPath, [childScript, module.url, module.export, place, String(commits)], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    const acknowledged: Array<number> = []
    let stderr = ""
    let pending = ""
    let waiting: { readonly count: number; readonly resolve: () => void; readonly reject: (e: Error) => void } | undefined
    const ended = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      child.on("close", (code, signal) => resolve({ code, signal }))
      child.on("error", (e) => {
        stderr += String(e)
        resolve({ code: null, signal: null })
      })
    })
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text))
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      const lines = (pending + text).split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) if (/^\d+$/.test(line)) acknowledged.push(Number(line))
      if (waiting !== undefined && acknowledged.length >= waiting.count) waiting.resolve()
    })
    void ended.then(({ code, signal }) =>
      waiting?.reject(new Error(`the committing child ended (code ${code}, signal ${signal}) after ${acknowledged.length} commits: ${stderr}`))
    )
    return {
      acknowledged,
      acknowledgedAtLeast: (count) =>
        acknowledged.length >= count ? Promise.resolve() : new Promise<void>((resolve, reject) => (waiting = { count, resolve, reject })),
      kill: async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
        return { ...(await ended), stderr }
      }
    }
  }
}
