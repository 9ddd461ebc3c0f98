/**
 * `npm run bench:container`: the image's start beside the same server outside a container, spawn to the first
 * answered `GET /healthz` (what a CI job waits for), on the memory store, in alternating rounds; the medians go to
 * docs/performance.md (`bench:container`, unless `BENCH_NO_DOCS=1`).
 *
 * "The same server" is the image's own /app (the built packages and their production dependencies), copied out of
 * the image and started by this repository's Node 24 with the image's entry point and flags. The image is the one
 * `npm run test:container` builds (`BENCH_IMAGE`, default localhost/fos:test). `BENCH_CONTAINER_ROUNDS` (7) rounds.
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { type AddressInfo, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { recordSection } from "./record.ts"

const image = process.env.BENCH_IMAGE ?? "localhost/fos:test"
const rounds = Number(process.env.BENCH_CONTAINER_ROUNDS ?? 7)
const hardNofile = Number(/^Max open files\s+\S+\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"))?.[1] ?? 4096)
const podman = ["--runtime", "runc"]
const limits = ["--ulimit", `nofile=${hardNofile}:${hardNofile}`, "--ulimit", "nproc=4096:4096"]

const freePort = () =>
  new Promise<number>((resolvePort) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolvePort(port))
    })
  })

/**
 * Milliseconds from spawning `command` to the first 200 of `GET origin/healthz`; then a SIGTERM (which `podman run`
 * passes on to the container).
 */
const timeToFirstAnswer = async (command: string, args: ReadonlyArray<string>, origin: string) => {
  const started = performance.now()
  const child = spawn(command, args, { stdio: "ignore" })
  const exited = new Promise((r) => child.on("exit", r))
  try {
    for (;;) {
      const ok = await fetch(`${origin}/healthz`).then((r) => r.ok, () => false)
      if (ok) return performance.now() - started
      if (performance.now() - started > 120_000) throw new Error(`${command}: no answer at ${origin}`)
      await new Promise((r) => setTimeout(r, 5))
    }
  } finally {
    child.kill("SIGTERM")
    await exited
  }
}

const [inspected] = JSON.parse(execFileSync("podman", [...podman, "image", "inspect", image], { encoding: "utf8" }))
const entrypoint: ReadonlyArray<string> = inspected.Config.Entrypoint
const outside = mkdtempSync(join(tmpdir(), "fos-bench-container-"))
const copy = execFileSync("podman", [...podman, "create", image], { encoding: "utf8" }).trim()
execFileSync("podman", [...podman, "cp", `${copy}:/app`, outside])
execFileSync("podman", [...podman, "rm", copy])
const node = join(import.meta.dirname, "..", "node_modules", "node", "bin", "node")

const container = async () => {
  const port = await freePort()
  return timeToFirstAnswer("podman", [...podman, "run", "--rm", ...limits, "-p", `127.0.0.1:${port}:4000`, "-e", "FOS_STORE=memory", image], `http://127.0.0.1:${port}`)
}
const direct = async () => {
  const port = await freePort()
  const args = [...entrypoint.slice(1).map((arg) => arg.replace(/^\/app\//, `${outside}/app/`)), "serve", "--store", "memory", "--port", String(port)]
  return timeToFirstAnswer(node, args, `http://127.0.0.1:${port}`)
}

// One untimed start of each: the image's layers and the compile cache are then where a repeated start finds them.
await container()
await direct()
const times = { container: [] as Array<number>, direct: [] as Array<number> }
for (let round = 0; round < rounds; round++) {
  for (const target of round % 2 === 0 ? (["container", "direct"] as const) : (["direct", "container"] as const)) {
    times[target].push(await (target === "container" ? container() : direct()))
  }
}
rmSync(outside, { recursive: true, force: true })
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const ratios = times.container.map((ms, i) => ms / times.direct[i]!)
const table = [
  `Spawn to the first answered \`GET /healthz\`, memory store, ${rounds} alternating rounds (medians; ${image}, ${(inspected.Size / 1e6).toFixed(0)} MB):`,
  "",
  "| | ms | vs outside |",
  "|---|---:|---:|",
  `| \`podman run\` the image | ${median(times.container).toFixed(0)} | ${median(ratios).toFixed(2)}x (goal ≤ 1.5x) |`,
  `| the image's /app on this Node, outside a container | ${median(times.direct).toFixed(0)} | 1.00x |`
].join("\n")
console.log(table)
if (process.env.BENCH_NO_DOCS !== "1") recordSection("container", table)
