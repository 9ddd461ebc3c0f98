/**
 * Three `fos serve` processes on one PostgreSQL (DATABASE_URL), driven as a load balancer drives them: round-robin.
 * What a client measures must not depend on how many processes there are (docs/storage.md, "What a process
 * keeps"): the rate-limit buckets and their headers, the list of recent requests, the live streams and their cap,
 * and `fos tail` are the service's; and killing one process loses none of it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { killAllFos, repoRoot, type RunningFos, startFos } from "./fosProcess.ts"

/** Debian's Chromium, for the inspector's check; CI requires it (FOS_REQUIRE_CHROMIUM=1). */
const chromiumPath = (process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, "chromium")).find((candidate) => {
  try {
    accessSync(candidate, constants.X_OK)
    return true
  } catch {
    return false
  }
})
if (chromiumPath === undefined && process.env.FOS_REQUIRE_CHROMIUM === "1") throw new Error("FOS_REQUIRE_CHROMIUM=1 but there is no chromium on the PATH")

const keyOf = (n: number) => `ck_sandbox_${n.toString(16).padStart(2, "0").repeat(32)}`
/** Limit 1/s, burst 20: the check. */
const slowKey = keyOf(0x31)
/** The sandbox's default limit (200/s, burst 400). */
const defaultKey = keyOf(0x32)
/** For the recent requests, the streams and the kill: a limit that never gets in the way. */
const wideKey = keyOf(0x33)

const organization = (id: string, key: string, rateLimit?: { sustainedPerSecond: number; burst: number }) => ({
  id,
  name: id,
  status: "active",
  ...(rateLimit === undefined ? {} : { rateLimit }),
  users: [{ id: `usr_${id.slice(4)}`, email: `${id.slice(4)}@service.test`, role: "admin" }],
  apiKeys: [{ key, access: "read_write", createdBy: `usr_${id.slice(4)}` }]
})

/** A GET of the sandbox of `key` through `origin`, its body read (so that its connection is free again). */
const get = async (origin: string, key: string, path = "/v2/portal/users/me") => {
  const response = await fetch(`${origin}/sandbox${path}`, { headers: { "x-api-key": key } })
  const text = await response.text()
  return { status: response.status, headers: response.headers, json: () => JSON.parse(text) as any }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `check` every 50 ms until it is true; the test's timeout bounds it. */
const eventually = async (check: () => Promise<boolean> | boolean) => {
  while (!(await check())) await sleep(50)
}

/** A live stream of the sandbox of `key` on `origin`, read as text; `close` ends it. */
const openStream = async (origin: string, key: string) => {
  const controller = new AbortController()
  const response = await fetch(`${origin}/sandbox/v2/simulate/stream?topics=requests`, { headers: { "x-api-key": key }, signal: controller.signal })
  let text = ""
  if (response.status === 200) {
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    void (async () => {
      try {
        while (true) {
          const { done, value } = await reader.read()
          if (done) return
          text += decoder.decode(value, { stream: true })
        }
      } catch {
        // aborted
      }
    })()
  } else {
    await response.text()
  }
  return { status: response.status, response, text: () => text, close: () => controller.abort() }
}

describe.skipIf(adminUrl === undefined || adminUrl === "")("three fos serve processes on one PostgreSQL, behind a load balancer", { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>
  let tmp: string
  let processes: Array<RunningFos>
  let origins: Array<string>

  beforeAll(async () => {
    database = await freshDatabase("service")
    tmp = mkdtempSync(join(tmpdir(), "fos-service-"))
    const seed = join(tmp, "seed.json")
    writeFileSync(seed, JSON.stringify({
      organizations: [
        organization("org_slow", slowKey, { sustainedPerSecond: 1, burst: 20 }),
        organization("org_default", defaultKey),
        organization("org_wide", wideKey, { sustainedPerSecond: 100_000, burst: 100_000 })
      ]
    }))
    const start = () => startFos(["--store", database.url, "--port", "0", "--clock", "virtual", "--seed", seed, "--quiet"])
    // One first, so that the migrations and the seed are applied once; then two more at once.
    processes = [await start()]
    processes.push(...(await Promise.all([start(), start()])))
    origins = processes.map((p) => p.origin)
  }, 90_000)

  afterAll(async () => {
    killAllFos()
    await database?.drop()
    rmSync(tmp, { recursive: true, force: true })
  })

  it("admit 100 requests round-robin with a limit of 1/s and a burst of 20 as one bucket: 20 answers of 200, the rest 429", async () => {
    const startedMs = Date.now()
    const answers: Array<Awaited<ReturnType<typeof get>>> = []
    for (let i = 0; i < 100; i++) answers.push(await get(origins[i % 3]!, slowKey))
    const elapsedS = (Date.now() - startedMs) / 1000
    const admitted = answers.filter((r) => r.status === 200)
    // A bucket of one token a second admits its burst plus what refilled while the requests ran.
    expect(admitted.length).toBeGreaterThanOrEqual(20)
    expect(admitted.length).toBeLessThanOrEqual(20 + Math.floor(elapsedS))
    // The first 20 were all admitted, whichever process answered, and each says what the service's bucket holds.
    expect(answers.slice(0, 20).map((r) => r.status)).toEqual(Array(20).fill(200))
    expect(answers.slice(0, 20).map((r) => Number(r.headers.get("x-ratelimit-remaining")))).toEqual(Array.from({ length: 20 }, (_, i) => 19 - i))
    for (const r of answers) expect(r.headers.get("x-ratelimit-limit")).toBe("20")
    for (const r of answers.filter((r) => r.status === 429)) {
      expect(r.headers.get("x-ratelimit-remaining")).toBe("0")
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      const problem = r.json() as { type: string; retryAfterSeconds: number }
      expect(problem.type).toBe("RATE_LIMITED")
      expect(problem.retryAfterSeconds).toBe(Number(r.headers.get("retry-after")))
    }
  })

  it("refuse a burst at the default limit's service-wide bound, whichever processes the requests reach", async () => {
    const requests = 1_500
    const startedMs = Date.now()
    let next = 0
    const statuses: Array<number> = []
    // 48 clients at once, each request to the next process in turn.
    await Promise.all(Array.from({ length: 48 }, async () => {
      while (next < requests) {
        const i = next++
        statuses.push((await get(origins[i % 3]!, defaultKey)).status)
      }
    }))
    const elapsedS = (Date.now() - startedMs) / 1000
    const admitted = statuses.filter((s) => s === 200).length
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true)
    // The bucket's burst and its refill over the run: one bucket for the service takes no tolerance (docs/decisions.md,
    // "Rate limits across processes").
    const bound = 400 + Math.floor(200 * elapsedS)
    expect(admitted).toBeLessThanOrEqual(bound)
    expect(admitted).toBeGreaterThanOrEqual(400)
    if (bound < requests) expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0)
  })

  it("list, stream and tail every process's requests: 20 through A appear on B, in order, each naming A", async () => {
    const [a, b] = origins as [string, string]
    const stream = await openStream(b, wideKey)
    expect(stream.status).toBe(200)
    const tail = spawn(process.execPath, ["adapters/node/bin/fos.js", "tail", "--types", "requests"], {
      cwd: repoRoot,
      env: { ...process.env, FOS_SERVER: b, FOS_API_KEY: wideKey },
      stdio: ["ignore", "pipe", "pipe"]
    }) as ChildProcess
    let tailed = ""
    tail.stdout!.setEncoding("utf8").on("data", (chunk: string) => (tailed += chunk))
    try {
      // The tail's own stream shows in the list once it is open (the list is the service's).
      await eventually(async () => {
        const list = (await get(b, wideKey, "/v2/simulate/requests?limit=100")).json() as { data: Array<{ path: string }> }
        return list.data.filter((r) => r.path === "/sandbox/v2/simulate/stream").length >= 2
      })
      const correlationIds: Array<string> = []
      for (let i = 0; i < 20; i++) {
        const r = await get(a, wideKey, `/v2/customers?limit=${i + 1}`)
        expect(r.status).toBe(200)
        correlationIds.push(r.headers.get("x-correlation-id")!)
      }
      // Another process's requests are in the list once its insert is in: a round trip after each answer.
      type Listed = { data: Array<{ path: string; correlationId: string; answeredBy: string }> }
      let list: Listed = { data: [] }
      await eventually(async () => {
        list = (await get(b, wideKey, "/v2/simulate/requests?limit=100")).json() as Listed
        return correlationIds.every((id) => list.data.some((r) => r.correlationId === id))
      })
      const throughA = list.data.filter((r) => correlationIds.includes(r.correlationId))
      // Newest first, as they were answered.
      expect(throughA.map((r) => r.correlationId)).toEqual([...correlationIds].reverse())
      expect(new Set(throughA.map((r) => r.answeredBy)).size).toBe(1)
      const aId = throughA[0]!.answeredBy
      // B's own requests (the lists read while waiting for the streams) name another process.
      const throughB = list.data.filter((r) => r.path === "/sandbox/v2/simulate/requests")
      expect(throughB.length).toBeGreaterThan(0)
      for (const r of throughB) expect(r.answeredBy).not.toBe(aId)
      // B's stream and the tail attached to B show all 20.
      await eventually(() => correlationIds.every((id) => stream.text().includes(id)))
      const order = correlationIds.map((id) => stream.text().indexOf(id))
      expect([...order].sort((x, y) => x - y)).toEqual(order)
      await eventually(() => correlationIds.every((id) => tailed.includes(id)))
      for (const id of correlationIds) expect(tailed.split("\n").find((line) => line.includes(id))).toContain(`by:${aId}`)
    } finally {
      stream.close()
      tail.kill("SIGINT")
    }
  })

  it.skipIf(chromiumPath === undefined)("show in the inspector which process answered each request", async () => {
    const [a, b] = origins as [string, string]
    for (let i = 0; i < 3; i++) expect((await get(a, wideKey, "/v2/customers?limit=3")).status).toBe(200)
    const browser = await chromium.launch({ executablePath: chromiumPath!, args: ["--no-sandbox", "--disable-gpu"] })
    try {
      const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage()
      await page.goto(`${b}/inspect`)
      await page.getByLabel("Key or operator token").fill(wideKey)
      await page.getByRole("button", { name: "Sign in" }).click()
      // B's list holds A's requests and its own: the table names the process of each.
      const header = page.locator("section", { hasText: "Recent requests" }).locator("th", { hasText: "process" })
      await expect.poll(() => header.count(), { timeout: 20_000 }).toBe(1)
      const list = (await get(b, wideKey, "/v2/simulate/requests?limit=100")).json() as { data: Array<{ answeredBy: string }> }
      const shown = await page.locator("section", { hasText: "Recent requests" }).locator("td .mono[title]").evaluateAll((cells) => cells.map((c) => c.getAttribute("title")))
      expect(new Set(shown).size).toBeGreaterThan(1)
      for (const process of shown) expect(list.data.map((r) => r.answeredBy)).toContain(process)
    } finally {
      await browser.close()
    }
  })

  it("refuse an organization's eleventh stream whichever process it is opened on", async () => {
    // The previous test's streams end a moment after their clients go.
    await eventually(async () => {
      const probe = await openStream(origins[0]!, wideKey)
      probe.close()
      return probe.status === 200
    })
    await sleep(200)
    const open: Array<Awaited<ReturnType<typeof openStream>>> = []
    try {
      for (let i = 0; i < 10; i++) {
        const s = await openStream(origins[i % 3]!, wideKey)
        expect(s.status, `stream ${i + 1}`).toBe(200)
        open.push(s)
      }
      for (const origin of origins) {
        const eleventh = await openStream(origin, wideKey)
        expect(eleventh.status).toBe(429)
        expect(eleventh.response.headers.get("retry-after")).not.toBeNull()
      }
      // One closed, one more opens, on any process.
      open.shift()!.close()
      await eventually(async () => {
        const again = await openStream(origins[2]!, wideKey)
        if (again.status === 200) open.push(again)
        return again.status === 200
      })
    } finally {
      for (const s of open) s.close()
    }
  })

  it("lose none of it when a process is killed: its requests stay listed, its bucket's tokens stay spent, its streams free their places", async () => {
    const [victim, ...rest] = processes as [RunningFos, RunningFos, RunningFos]
    const survivor = rest[0]!.origin
    const streams = [] as Array<Awaited<ReturnType<typeof openStream>>>
    try {
      for (let i = 0; i < 10; i++) {
        const s = await openStream(victim.origin, wideKey)
        expect(s.status).toBe(200)
        streams.push(s)
      }
      expect((await openStream(survivor, wideKey)).status).toBe(429)
      const marker = await get(victim.origin, wideKey, "/v2/customers?limit=7")
      const markerId = marker.headers.get("x-correlation-id")!
      // Its request is the service's once answered: listed by another process, before the kill and after.
      await eventually(async () => {
        const list = (await get(survivor, wideKey, "/v2/simulate/requests?limit=100")).json() as { data: Array<{ correlationId: string }> }
        return list.data.some((r) => r.correlationId === markerId)
      })
      // The slow bucket (1/s, burst 20) spent through the process about to be killed.
      for (let i = 0; i < 25; i++) await get(victim.origin, slowKey)
      const killedAtMs = Date.now()
      await victim.stop("SIGKILL")
      const list = (await get(survivor, wideKey, "/v2/simulate/requests?limit=100")).json() as { data: Array<{ correlationId: string }> }
      expect(list.data.some((r) => r.correlationId === markerId)).toBe(true)
      // The bucket kept what was spent: another process finds it refilled by the seconds since, not full.
      const after = await get(rest[1]!.origin, slowKey)
      const refilled = Math.ceil((Date.now() - killedAtMs) / 1000) + 1
      expect(Number(after.headers.get("x-ratelimit-remaining"))).toBeLessThanOrEqual(refilled)
      // The killed process's ten streams stop counting once it counts as dead (a few seconds).
      await eventually(async () => {
        const s = await openStream(survivor, wideKey)
        if (s.status === 200) streams.push(s)
        return s.status === 200
      })
    } finally {
      for (const s of streams) s.close()
    }
  })
})
