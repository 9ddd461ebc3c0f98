/**
 * A page in a headless Chromium of its own, driven over the DevTools protocol (test/docs-page.test.ts and
 * bench/docs-page.ts): a fresh profile each time, so nothing is cached; no connection leaves 127.0.0.1, and none of
 * Chromium's own background traffic, which this machine's closed network refuses.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A page: a DevTools command in its session, and an expression's value in it. */
export interface ChromiumPage {
  readonly send: (method: string, params?: object) => Promise<any>
  readonly evaluate: (expression: string) => Promise<any>
}

/**
 * Starts `binary` (a window of `width`×`height`, `flags` besides), opens a blank page and runs `use` on it; Chromium
 * is stopped and its profile removed whatever `use` does.
 */
export const withChromiumPage = async <A>(
  binary: string,
  window: { readonly width: number; readonly height: number; readonly flags?: ReadonlyArray<string> },
  use: (page: ChromiumPage) => Promise<A>
): Promise<A> => {
  const profile = mkdtempSync(join(tmpdir(), "fos-chromium-"))
  const child = spawn(binary, [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", ...(window.flags ?? []), `--window-size=${window.width},${window.height}`, `--user-data-dir=${profile}`,
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1", "--remote-debugging-port=0", "about:blank"
  ], { stdio: ["ignore", "ignore", "pipe"] })
  try {
    const endpoint = await new Promise<string>((resolve, reject) => {
      let err = ""
      child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
        err += chunk
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(err)
        if (m !== null) resolve(m[1]!)
      })
      child.on("exit", (code) => reject(new Error(`chromium exited (${code}) before listening: ${err}`)))
    })
    const socket = new WebSocket(endpoint)
    await new Promise((resolve, reject) => {
      socket.onopen = resolve
      socket.onerror = reject
    })
    let next = 0
    const waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>()
    socket.onmessage = (message) => {
      const reply = JSON.parse(String(message.data))
      const caller = waiting.get(reply.id)
      if (caller === undefined) return
      waiting.delete(reply.id)
      if (reply.error !== undefined) caller.reject(new Error(`${reply.error.message}`))
      else caller.resolve(reply.result)
    }
    // A Chromium that dies leaves no request waiting on it.
    socket.onclose = () => {
      for (const caller of waiting.values()) caller.reject(new Error("chromium closed its DevTools connection"))
      waiting.clear()
    }
    const command = (method: string, params: object = {}, sessionId?: string): Promise<any> =>
      new Promise((resolve, reject) => {
        const id = ++next
        waiting.set(id, { resolve, reject })
        socket.send(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }))
      })
    const { targetId } = await command("Target.createTarget", { url: "about:blank" })
    const { sessionId } = await command("Target.attachToTarget", { targetId, flatten: true })
    const send = (method: string, params: object = {}) => command(method, params, sessionId)
    await send("Page.enable")
    const result = await use({
      send,
      evaluate: async (expression) => (await send("Runtime.evaluate", { expression, returnByValue: true })).result.value
    })
    await command("Browser.close").catch(() => undefined)
    socket.close()
    return result
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGKILL")
      await exited
    }
    rmSync(profile, { recursive: true, force: true, maxRetries: 5 })
  }
}
