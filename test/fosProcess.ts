/**
 * `fos serve` as a child process, for the tests and benches that need the real server: on Node (this Node, type
 * stripping, no loader), or on Bun or Deno (their npm-installed binaries, with their own HTTP servers); resolved
 * once it prints both base addresses, and tracked so a test file can stop every server it started.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { resolve } from "node:path"

export const repoRoot = resolve(import.meta.dirname, "..")

/**
 * What `npm start` runs after `exec node` (its V8 flags, the entry point and `serve`) in a checkout, read from its
 * package.json so that the tests and the benches run the server as it is started.
 */
export const startArgsOf = (checkout: string): ReadonlyArray<string> => {
  const script = (JSON.parse(readFileSync(resolve(checkout, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start
  // `exec`: sh becomes node, so the signal npm forwards to its script reaches the server (docs/decisions.md).
  const [exec, command, ...args] = script.trim().split(/\s+/)
  if (exec !== "exec" || command !== "node" || args.at(-1) !== "serve") throw new Error(`package.json's start script is not "exec node ... serve": ${script}`)
  return args
}

/** `startArgsOf` this checkout. */
export const nodeStartArgs: ReadonlyArray<string> = startArgsOf(repoRoot)

/**
 * The origin a `fos serve` child prints on its `sandbox:` start line, once it has (its stdout piped); rejects if it
 * exits first. For a server the caller spawned itself (another checkout's, a bench's): `startFos` does more.
 */
export const listeningOrigin = (child: ChildProcess): Promise<string> =>
  new Promise((ok, fail) => {
    let out = ""
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      const m = /^sandbox: (http:\/\/\S+)\/sandbox$/m.exec(out)
      if (m !== null) ok(m[1]!)
    })
    child.on("exit", (code) => fail(new Error(`fos serve exited ${code}: ${out}`)))
  })

/**
 * The flag that makes a runtime read the workspace packages' TypeScript sources instead of a build (the
 * "@fos/source" export condition), as `npm start` gives it to Node; Bun and Deno take the same flag.
 */
export const sourceConditionFlag = "--conditions=@fos/source"

/**
 * The V8 flags of `npm start` (docs/decisions/0005-young-generation.md). Deno runs V8 too and gets the same
 * (deno.json's serve task).
 */
export const v8StartFlags: ReadonlyArray<string> = nodeStartArgs.filter((arg) => arg.startsWith("--") && arg !== sourceConditionFlag)

export interface RunningFos {
  readonly child: ChildProcess
  /** `http://host:port`, without a base address. */
  readonly origin: string
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  /** Sends `signal` (SIGTERM by default) and waits for the exit. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

const running = new Set<ChildProcess>()

/**
 * Sends SIGTERM, then SIGTERM and SIGINT in turn every millisecond until the server has exited, and resolves with
 * its exit: what a server gets when a terminal's Ctrl-C or a kill of `npm start`'s process group reaches it
 * directly and again through npm, with the later signals landing anywhere in its shutdown.
 */
export const stopUnderRepeatedSignals = async (server: RunningFos) => {
  let exited = false
  const exit = server.exited.finally(() => (exited = true))
  server.child.kill("SIGTERM")
  for (let i = 0; !exited; i++) {
    server.child.kill(i % 2 === 0 ? "SIGTERM" : "SIGINT")
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  return exit
}

/** The environment a server gets: this one without PORT (so --port decides), plus `extra`. */
const envWith = (extra: Readonly<Record<string, string>>) => {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra }
  if (!("PORT" in extra)) delete env.PORT
  return env
}

export type FosRuntime = "node" | "bun" | "deno"

/** The command that runs `fos serve` on `runtime`, from the repository root (README gives the same for users). */
export const serveCommand = (runtime: FosRuntime): { readonly file: string; readonly args: ReadonlyArray<string> } => {
  switch (runtime) {
    case "node": return { file: process.execPath, args: nodeStartArgs }
    case "bun": return { file: resolve(repoRoot, "node_modules/.bin/bun"), args: [sourceConditionFlag, "adapters/bun/src/main.ts", "serve"] }
    case "deno":
      return {
        file: resolve(repoRoot, "node_modules/.bin/deno"),
        args: ["run", "-A", sourceConditionFlag, `--v8-flags=${v8StartFlags.join(",")}`, "adapters/deno/src/main.ts", "serve"]
      }
  }
}

/** Starts `fos serve <args>` (on Node unless `runtime` says otherwise); rejects with its output if it exits before listening. */
export const startFos = (
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string>> = {},
  runtime: FosRuntime = "node"
): Promise<RunningFos> =>
  new Promise((resolvePromise, reject) => {
    const command = serveCommand(runtime)
    const child = spawn(command.file, [...command.args, ...args], {
      cwd: repoRoot,
      env: envWith(env),
      stdio: ["ignore", "pipe", "pipe"]
    })
    running.add(child)
    let out = ""
    let err = ""
    let started = false
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
      child.on("exit", (code, signal) => {
        running.delete(child)
        done({ code, signal })
        if (!started) reject(new Error(`fos serve exited (${code ?? signal}) before listening\nstdout: ${out}\nstderr: ${err}`))
      })
    })
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk))
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      // A start line as printed, or as the message of a JSON record (--log-format json).
      const m = /^(?:\{.*"message":")?sandbox: (http:\/\/[^\s"]+)\/sandbox(?:".*\})?\s*$/m.exec(out)
      if (m !== null && /^(?:\{.*"message":")?live: /m.test(out) && !started) {
        started = true
        resolvePromise({
          child,
          origin: m[1]!,
          stdout: () => out,
          stderr: () => err,
          exited,
          stop: (signal = "SIGTERM") => {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal)
            return exited
          }
        })
      }
    })
    child.on("error", reject)
  })

/** Kills every server this process started and has not seen exit (for afterAll). */
export const killAllFos = (): void => {
  for (const child of running) child.kill("SIGKILL")
}
