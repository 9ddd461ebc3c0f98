/**
 * The image, built from the Containerfile and run with podman as CI runs it (docs/container.md): small, unprivileged,
 * the README's first deposit against it, its data kept on the volume across a restart, a SIGTERM that stops it
 * cleanly with every acknowledged write kept, and its configuration by environment.
 *
 * Not part of `npm test` (building the image takes minutes): `npm run test:container`, which `.ci/run` runs after it.
 */
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { type AddressInfo, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot, v8StartFlags } from "../fosProcess.ts"

const run = promisify(execFile)
const image = "localhost/fos:test"
const suffix = randomBytes(4).toString("hex")

/**
 * podman with the settings a machine like CI's needs (docs/container.md, "On a machine without a Docker engine"):
 * runc, and resource limits the sandbox may give.
 */
const hardNofile = Number(/^Max open files\s+\S+\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"))?.[1] ?? 4096)
const limits = ["--ulimit", `nofile=${hardNofile}:${hardNofile}`, "--ulimit", "nproc=4096:4096"]
const podman = async (args: ReadonlyArray<string>, timeout = 120_000) => {
  const { stdout } = await run("podman", ["--runtime", "runc", ...args], { timeout, maxBuffer: 64 << 20 })
  return stdout
}

const containers: Array<string> = []
const volumes: Array<string> = []

/** Starts the image detached with `args` (before the image's name) and `command` (after it); its host port. */
const start = async (args: ReadonlyArray<string>, command: ReadonlyArray<string> = []) => {
  const name = `fos-test-${suffix}-${containers.length}`
  containers.push(name)
  await podman(["run", "-d", "--name", name, ...limits, "-p", "127.0.0.1::4000", ...args, image, ...command])
  const port = Number((await podman(["port", name, "4000/tcp"])).trim().split(":").at(-1))
  return { name, origin: `http://127.0.0.1:${port}` }
}

/** The container's standard output once it holds `line`. */
const logsOnceThere = async (name: string, line: RegExp, withinMs = 120_000) => {
  const until = performance.now() + withinMs
  for (;;) {
    const { stdout, stderr } = await run("podman", ["logs", name], { maxBuffer: 64 << 20 })
    if (line.test(stdout)) return { stdout, stderr }
    if (performance.now() > until) throw new Error(`${name}: no ${line} in its output\n${stdout}\n${stderr}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

const exportLine = (stdout: string) => {
  const line = /^ {2}for the quick start: export (.+)$/m.exec(stdout)?.[1]
  if (line === undefined) throw new Error(`no export line in\n${stdout}`)
  return Object.fromEntries(line.split(" ").map((pair) => pair.split("=") as [string, string]))
}

const json = async (response: Response) => {
  const text = await response.text()
  try {
    return JSON.parse(text)
  } catch {
    throw new Error(`${response.status}: ${text}`)
  }
}

beforeAll(async () => {
  await run("bash", [join(repoRoot, "test/container/base.sh")], { timeout: 900_000 })
  const secret = process.env.NODE_EXTRA_CA_CERTS === undefined ? [] : ["--secret", `id=ca,src=${process.env.NODE_EXTRA_CA_CERTS}`]
  await podman(["build", "--format", "docker", "--pull=never", ...secret, ...limits, "-t", image, "-f", join(repoRoot, "Containerfile"), repoRoot], 1_500_000)
}, 2_400_000)

afterAll(async () => {
  for (const name of containers) await podman(["rm", "-f", "-t", "0", name]).catch(() => {})
  for (const volume of volumes) await podman(["volume", "rm", "-f", volume]).catch(() => {})
})

describe("the image", { timeout: 300_000 }, () => {
  it("holds Node and the server only, runs as node, and is the size docs/container.md says", async () => {
    const [inspected] = JSON.parse(await podman(["image", "inspect", image]))
    expect(inspected.Config.User).toBe("node")
    expect(inspected.Config.ExposedPorts).toHaveProperty(["4000/tcp"])
    expect(Object.keys(inspected.Config.Volumes)).toEqual(["/data"])
    expect(inspected.Healthcheck.Test[0]).toBe("CMD")
    // The same V8 flags as npm start's.
    expect(inspected.Config.Entrypoint.filter((arg: string) => arg.startsWith("--"))).toEqual(v8StartFlags)
    const ids = await podman(["run", "--rm", ...limits, "--entrypoint", "node", image, "-e", "console.log(process.getuid(), process.getgid(), process.version)"])
    expect(ids.trim()).toMatch(/^1000 1000 v24\./)
    // No shell, no package manager, no other runtime.
    for (const program of ["/bin/sh", "/usr/local/bin/npm", "/usr/local/bin/bun", "/usr/local/bin/deno"]) {
      await expect(podman(["run", "--rm", ...limits, "--entrypoint", program, image, "--version"]), program).rejects.toThrow()
    }
    const megabytes = inspected.Size / 1e6
    const documented = [
      /\| Size \| about (\d+) MB/.exec(readFileSync(join(repoRoot, "docs/container.md"), "utf8"))?.[1],
      /an image of about (\d+) MB/.exec(readFileSync(join(repoRoot, "README.md"), "utf8"))?.[1]
    ].map(Number)
    for (const size of documented) expect(Math.abs(megabytes - size) / size, `${megabytes.toFixed(0)} MB, documented ${size}`).toBeLessThan(0.1)
  })

  it("starts a new container warm: every module the server loads is in the compile cache the build made", async () => {
    // Node's debug lines for its compile cache say, for each module, whether the cache held it ("accepted") and
    // whether the run had to write a new entry; a new container on the baked cache writes none.
    const name = `fos-test-${suffix}-warm`
    containers.push(name)
    await podman(["run", "-d", "--name", name, ...limits, "-p", "127.0.0.1::4000", "-e", "FOS_STORE=memory", "-e", "NODE_DEBUG_NATIVE=COMPILE_CACHE", image])
    const port = Number((await podman(["port", name, "4000/tcp"])).trim().split(":").at(-1))
    await logsOnceThere(name, /^live: /m)
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
    await podman(["stop", "-t", "5", name])
    const { stdout, stderr } = await run("podman", ["logs", name], { maxBuffer: 64 << 20 })
    const lines = `${stdout}\n${stderr}`.split("\n").filter((line) => line.startsWith("[compile cache]"))
    const verdicts = lines.filter((line) => / V8 code cache for /.test(line))
    // The server runs its bundle (docs/decisions/0020-the-server-bundle.md): its entry and the chunks a start loads.
    expect(verdicts.filter((line) => line.includes("/app/node_modules/@fos/node/dist/server/")).length).toBeGreaterThanOrEqual(3)
    expect(verdicts.filter((line) => !line.includes("was accepted"))).toEqual([])
    expect(lines.filter((line) => /persisting/.test(line) && !/skip persisting .* because cache was the same/.test(line))).toEqual([])
  })

  it("runs the README's first deposit, order and payout as written, on a virtual clock", async () => {
    const { name, origin } = await start(["-e", "FOS_STORE=memory", "-e", "FOS_CLOCK=virtual"])
    const { stdout } = await logsOnceThere(name, /^live: http:\/\/\S+\/live$/m)
    // The start lines, once, on standard output.
    expect(stdout.match(/^sandbox: /gm)).toHaveLength(1)
    const env = exportLine(stdout)
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
    const block = /^```sh\n(# \$1,000 arrives[\s\S]*?)^```$/m.exec(readme)?.[1]
    expect(block).toBeDefined()
    const outputs: Array<unknown> = []
    for (const command of block!.split("\n").reduce<Array<string>>((commands, line) => {
      if (line.startsWith("#") || line.trim() === "") return commands
      if (commands.length > 0 && commands.at(-1)!.endsWith("\\")) commands[commands.length - 1] = `${commands.at(-1)!}\n${line}`
      else commands.push(line)
      return commands
    }, [])) {
      const { stdout: answer } = await run("sh", ["-c", command.replaceAll("localhost:4000", origin.slice("http://".length))], {
        env: { ...process.env, ...env }
      })
      const body = JSON.parse(answer)
      // No problem (RFC 9457: a type, a title and a status).
      expect(typeof body.status === "number" && typeof body.title === "string", `${command}\n${answer}`).toBe(false)
      outputs.push(body)
    }
    const transactions = outputs.at(-1) as { data: ReadonlyArray<{ status: string }> }
    expect(transactions.data.map((t) => t.status)).toEqual(["completed", "completed", "completed"])
    // The healthcheck the image declares passes.
    await podman(["healthcheck", "run", name])
  })

  it("keeps its data on the volume, and stops on SIGTERM within podman's 5 s with every acknowledged write kept", async () => {
    const volume = `fos-test-${suffix}`
    volumes.push(volume)
    const first = await start(["-v", `${volume}:/data`, "-e", "FOS_CLOCK=virtual"])
    const { stdout } = await logsOnceThere(first.name, /^live: http:\/\/\S+\/live$/m, 240_000)
    const { FOS_API_KEY: key, ACCOUNT: account } = exportLine(stdout)
    const headers = { "x-api-key": key!, "content-type": "application/json" }
    // Deposits keep arriving while the container is told to stop; each one answered 201 must be there after.
    const acknowledged: Array<string> = []
    let writing = true
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const response = await fetch(`${first.origin}/sandbox/v2/simulate/deposits`, {
          method: "POST",
          headers,
          body: JSON.stringify({ destination: { type: "virtual_account", virtualAccountId: account }, assetAmount: { code: "USD", amount: `${i + 1}.00` }, rail: "rtp" })
        }).catch(() => undefined)
        if (response?.status === 201) acknowledged.push((await response.json()).id)
        else if (response !== undefined) await response.arrayBuffer()
      }
    })()
    while (acknowledged.length < 5) await new Promise((r) => setTimeout(r, 20))
    // podman stop sends SIGTERM and, after 5 s, SIGKILL: an exit code of 0 is a clean stop within them.
    await podman(["stop", "-t", "5", first.name])
    writing = false
    await writer
    const [stopped] = JSON.parse(await podman(["inspect", first.name]))
    expect(stopped.State.ExitCode).toBe(0)

    const second = await start(["-v", `${volume}:/data`, "-e", "FOS_CLOCK=virtual"])
    await logsOnceThere(second.name, /^live: http:\/\/\S+\/live$/m, 240_000)
    for (const id of acknowledged) {
      const response = await fetch(`${second.origin}/sandbox/v2/transactions/${id}`, { headers })
      expect(response.status, id).toBe(200)
      await response.arrayBuffer()
    }
  })

  it("takes its configuration from the environment: store, clock, seed, fixture, operator token, base path, log format", async () => {
    // Mounted files are read by the image's user, uid 1000 (mkdtemp makes the directory its creator's alone).
    const dir = mkdtempSync(join(tmpdir(), "fos-container-"))
    chmodSync(dir, 0o755)
    const key = `ck_sandbox_${"c3".repeat(32)}`
    const token = "container-operator-token"
    const seed = {
      organizations: [{
        id: "org_ci",
        name: "CI",
        status: "active",
        users: [{ id: "usr_ci", email: "ci@ci.test", role: "admin" }],
        apiKeys: [{ key, access: "read_write", createdBy: "usr_ci" }]
      }]
    }
    writeFileSync(join(dir, "seed.json"), JSON.stringify(seed))

    // A fixture: a world with a webhook endpoint, saved and exported by a first container.
    const maker = await start(["-v", `${dir}:/fixtures:ro`, "-e", "FOS_STORE=memory", "-e", "FOS_SEED=/fixtures/seed.json", "-e", `FOS_OPERATOR_TOKEN=${token}`])
    await logsOnceThere(maker.name, /^live: /m)
    const headers = { "x-api-key": key, "content-type": "application/json" }
    const endpoint = await json(await fetch(`${maker.origin}/sandbox/v2/webhooks/endpoints`, {
      method: "POST",
      headers,
      body: JSON.stringify({ url: "https://hooks.example.com/fos" })
    }))
    const snapshot = await json(await fetch(`${maker.origin}/sandbox/v2/simulate/snapshots`, { method: "POST", headers, body: "{}" }))
    const file = await fetch(`${maker.origin}/operator/snapshots/${snapshot.id}/export`, { headers: { authorization: `Bearer ${token}` } })
    expect(file.status).toBe(200)
    writeFileSync(join(dir, "world.json"), await file.text())

    const { name, origin } = await start([
      "-v", `${dir}:/fixtures:ro`,
      "-e", "FOS_STORE=memory",
      "-e", "FOS_CLOCK_START=2026-05-04T10:00:00Z",
      "-e", "FOS_RANDOM_SEED=42",
      "-e", `FOS_SEED=${JSON.stringify(seed)}`,
      "-e", "FOS_LOAD=org_ci=/fixtures/world.json",
      "-e", `FOS_OPERATOR_TOKEN=${token}`,
      "-e", "FOS_BASE_PATH=/fos",
      "-e", "FOS_LOG_FORMAT=json"
    ])
    // With FOS_LOG_FORMAT=json every line is a record, the start lines' text its message.
    const { stdout } = await logsOnceThere(name, /"message":"live: http:\/\/\S+\/fos\/live"/)
    const lines = stdout.trim().split("\n")
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow()
    expect(lines.map((line) => JSON.parse(line).message)).toContainEqual(expect.stringMatching(/^clock: virtual, at 2026-05-04T10:00:00\.000Z;/))
    const base = `${origin}/fos/sandbox`
    expect((await json(await fetch(`${base}/v2/webhooks/endpoints/${endpoint.id}`, { headers }))).id).toBe(endpoint.id)
    // The loaded snapshot brought its own sandbox clock back with it (the maker's, on real time).
    expect((await json(await fetch(`${base}/v2/simulate/clock`, { headers }))).now).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect((await fetch(`${origin}/fos/operator/organizations`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    expect((await fetch(`${origin}/fos/healthz`)).status).toBe(200)
    expect((await fetch(`${origin}/healthz`)).status).toBe(404)
    // The healthcheck follows the base path.
    await podman(["healthcheck", "run", name])
    // The request log too: a record per request.
    const { stdout: later } = await logsOnceThere(name, /"method":"GET","path":"[^"]*\/v2\/simulate\/clock"/)
    for (const line of later.trim().split("\n")) expect(() => JSON.parse(line), line).not.toThrow()
  })

  it("runs as two processes on one PostgreSQL, as compose.yaml does", async () => {
    // compose.yaml's own PostgreSQL image cannot be pulled here (no registry): the two containers share the host's
    // PostgreSQL instead, on the host's network (docs/container.md).
    const database = `fos_container_${suffix}`
    await run("psql", ["-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-c", `create database ${database}`])
    try {
      const token = "compose-operator-token"
      const env = ["--network", "host", "-e", `FOS_STORE=postgres://postgres@127.0.0.1:5432/${database}`, "-e", `FOS_OPERATOR_TOKEN=${token}`, "-e", "FOS_HOST=127.0.0.1"]
      const key = `ck_sandbox_${"d4".repeat(32)}`
      const seed = JSON.stringify({
        organizations: [{
          id: "org_two",
          name: "Two",
          status: "active",
          users: [{ id: "usr_two", email: "two@two.test", role: "admin" }],
          apiKeys: [{ key, access: "read_write", createdBy: "usr_two" }]
        }]
      })
      const ports = [await freePort(), await freePort()]
      const names: Array<string> = []
      for (const port of ports) {
        const name = `fos-test-${suffix}-pg-${port}`
        containers.push(name)
        await podman(["run", "-d", "--name", name, ...limits, ...env, "-e", `FOS_PORT=${port}`, "-e", `FOS_SEED=${seed}`, image])
        names.push(name)
      }
      for (const name of names) await logsOnceThere(name, /^live: /m, 240_000)
      const [a, b] = ports.map((port) => `http://127.0.0.1:${port}/sandbox`)
      const headers = { "x-api-key": key, "content-type": "application/json" }
      const made = await json(await fetch(`${a}/v2/webhooks/endpoints`, { method: "POST", headers, body: JSON.stringify({ url: "https://hooks.example.com/two" }) }))
      expect((await json(await fetch(`${b}/v2/webhooks/endpoints/${made.id}`, { headers }))).id).toBe(made.id)
    } finally {
      for (const name of containers.filter((n) => n.includes("-pg-"))) await podman(["rm", "-f", "-t", "0", name]).catch(() => {})
      await run("psql", ["-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-c", `drop database if exists ${database} with (force)`]).catch(() => {})
    }
  })
})

/** A port free on the host's loopback now (the kernel's choice). */
const freePort = () =>
  new Promise<number>((resolvePort, reject) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolvePort(port))
    })
    server.on("error", reject)
  })
