/**
 * The command line's flags: an unknown flag names the closest one the command takes, and where every flag is
 * listed (exit 2, nothing done); each command's own --help, its examples read by fos's own parser; the
 * organization given as --org everywhere; and one way of quoting in every error message.
 */
import { spawnSync } from "node:child_process"
import { resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { parseListenArgs } from "../adapters/node/src/listen.ts"
import { operatorCommands, operatorRequest } from "../adapters/node/src/operator.ts"
import { parseTailArgs } from "../adapters/node/src/tail.ts"
import { parseServeArgs, UsageError } from "../adapters/serve/src/Options.ts"

const root = resolve(import.meta.dirname, "..")
const fos = (...args: Array<string>) =>
  spawnSync(process.execPath, ["adapters/node/bin/fos.js", ...args], { cwd: root, encoding: "utf8", env: { ...process.env, FOS_SERVER: "http://127.0.0.1:9", FOS_OPERATOR_TOKEN: "cli-flags-operator-token" } })

describe("an unknown flag", { timeout: 60_000 }, () => {
  it.each([
    [["keys", "create", "--orgg", "org_x"], "fos: unknown flag --orgg; did you mean --org? (fos keys --help lists every flag)"],
    [["serve", "--prot", "0"], "fos: unknown flag --prot; did you mean --port? (fos serve --help lists every flag)"],
    [["tail", "--typs", "events"], "fos: unknown flag --typs; did you mean --types? (fos tail --help lists every flag)"],
    [["listen", "--forward", "http://127.0.0.1:3000"], "fos: unknown flag --forward; did you mean --forward-to? (fos listen --help lists every flag)"],
    [["timers", "--org", "org_x", "--housekeepin"], "fos: unknown flag --housekeepin; did you mean --housekeeping? (fos timers --help lists every flag)"],
    [["orgs", "list", "--zzzzzzzz"], "fos: unknown flag --zzzzzzzz (fos orgs --help lists every flag)"]
  ])("fos %j", (args, message) => {
    const result = fos(...args)
    expect(result.status, result.stderr).toBe(2)
    expect(result.stderr).toBe(`${message}\n`)
    expect(result.stdout).toBe("")
  })
})

const commands = [...operatorCommands, "serve", "tail", "listen"]

/** A shell line's words, as sh splits them: quotes taken off, a comment and the redirections (`> file`) dropped. */
const wordsOf = (line: string): Array<string> => {
  const words: Array<string> = []
  let word: string | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "'" || c === "\"") {
      const end = line.indexOf(c, i + 1)
      word = (word ?? "") + line.slice(i + 1, end)
      i = end
    } else if (c === " ") {
      if (word !== undefined) words.push(word)
      word = undefined
    } else if (c === "#" && word === undefined) break
    else word = (word ?? "") + c
  }
  if (word !== undefined) words.push(word)
  return words.filter((w, i) => w !== ">" && w !== "<" && words[i - 1] !== ">" && words[i - 1] !== "<")
}

/** The example lines of a help text: those under its `examples:`, each a fos command once its variables are set. */
const examplesOf = (help: string): Array<string> => {
  const section = /^examples?:\n((?: {2}.*\n?)+)/m.exec(help)?.[1] ?? ""
  return section.split("\n").map((line) => line.trim()).filter((line) => line !== "")
}

/** The flags a help text names, without their dashes; --help and --version, which every command takes, left out. */
const flagsNamed = (help: string): Array<string> =>
  [...new Set([...help.matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)].map((m) => m[1]!))].filter((f) => f !== "help" && f !== "version")

const env = { FOS_API_KEY: "ck_sandbox_x", FOS_OPERATOR_TOKEN: "t" }

/** Reads `args` (what follows `fos`) with the parser of its command, as `fos` would before calling a server. */
const parseWithFos = (args: ReadonlyArray<string>, notes: Array<string>): unknown => {
  const [command, ...rest] = args
  if (command === "serve") return parseServeArgs(rest, {})
  if (command === "tail") return parseTailArgs(rest, env, (line) => notes.push(line))
  if (command === "listen") return parseListenArgs(rest, env)
  return operatorRequest(command!, rest, (line) => notes.push(line))
}

describe("each command's --help", { timeout: 60_000 }, () => {
  const helps = new Map(commands.map((command) => {
    const result = fos(command, "--help")
    expect(result.status, `${command}: ${result.stderr}`).toBe(0)
    return [command, result.stdout] as const
  }))

  it("is its own: no two commands print the same help", () => {
    expect(new Set(helps.values()).size).toBe(commands.length)
    for (const [command, help] of helps) expect(help, command).toMatch(new RegExp(`^usage: fos ${command} `))
  })

  it.each(commands)("fos %s --help names only flags the command takes", (command) => {
    const help = helps.get(command)!
    const named = flagsNamed(help)
    expect(named.length, help).toBeGreaterThan(0)
    // Each named flag is one the parser knows: given to the command (to one of its actions), it is no unknown flag.
    const actions = operatorCommands.has(command) ? [...new Set([...help.matchAll(new RegExp(`^(?:usage:| +) fos ${command} ([a-z-]+)`, "gm"))].map((m) => m[1]!))] : [""]
    for (const flag of named) {
      const refusals = (actions.length === 0 ? [""] : actions).map((action) => {
        try {
          parseWithFos([command, ...(action === "" || action === undefined ? [] : [action]), `--${flag}`, "x"], [])
          return ""
        } catch (e) {
          return (e as Error).message
        }
      })
      expect(refusals.some((m) => !m.includes(`unknown flag --${flag}`)), `fos ${command} --help names --${flag}: ${refusals.join(" | ")}`).toBe(true)
    }
  })

  it.each(commands)("fos %s --help has examples, and each parses with fos's own parser, in today's spelling", (command) => {
    const examples = examplesOf(helps.get(command)!)
    expect(examples.length, helps.get(command)).toBeGreaterThan(0)
    for (const example of examples) {
      const words = wordsOf(example)
      expect(words[0], example).toBe("fos")
      expect(words[1], example).toBe(command)
      const notes: Array<string> = []
      try {
        parseWithFos(words.slice(1), notes)
      } catch (e) {
        // A file the example names is read by the parser; every flag was taken before it looked for the file.
        if (!(command === "serve" && /^--seed "seed\.json": cannot read the file \(ENOENT\)$/.test((e as Error).message))) throw new Error(`${example}: ${(e as Error).message}`)
      }
      expect(notes, example).toEqual([])
    }
  })

  it("fos --help's examples parse too", () => {
    const general = fos("--help")
    const examples = examplesOf(general.stdout).map(wordsOf).map((words) => words.filter((w) => !/^[A-Z_]+=/.test(w))).filter((w) => w[0] === "fos")
    expect(examples.length).toBeGreaterThan(4)
    for (const words of examples) expect(() => parseWithFos(words.slice(1), []), words.join(" ")).not.toThrow()
  })
})

describe("the organization", () => {
  it("is --org ORG_ID in every command's usage", () => {
    const general = fos("--help").stdout
    expect(general).toContain("--org ORG_ID")
    // No usage line names an organization but by --org.
    for (const help of [general, ...commands.map((command) => fos(command, "--help").stdout)]) {
      expect(help.replaceAll("--org ORG_ID", "")).not.toMatch(/\bORG_ID\b/)
    }
  }, 60_000)

  // Each command that acts on one organization: what comes before the organization, and what after it.
  const cases: ReadonlyArray<readonly [ReadonlyArray<string>, ReadonlyArray<string>]> = [
    [["reset"], []],
    [["timers"], ["--limit", "5", "--housekeeping"]],
    [["events"], ["--type", "customer.created"]],
    [["audit"], []],
    [["journal"], ["vac_1", "--asset", "USD"]],
    [["timeline"], ["txn_1"]],
    [["orgs", "activate"], []],
    [["orgs", "suspend"], []],
    [["orgs", "provision-sandbox"], []],
    [["orgs", "restrict"], []],
    [["orgs", "unrestrict"], []],
    [["orgs", "set"], ["--rate-limit", "default"]],
    [["users", "list"], []],
    [["keys", "list"], []],
    [["snapshots", "list"], []],
    [["snapshots", "create"], []],
    [["snapshots", "import"], ["world.json"]],
    [["faults", "list"], []],
    [["faults", "arm"], ["--fault", "{}"]],
    [["faults", "delete"], []],
    [["faults", "delete"], ["flt_1"]],
    [["outcomes", "list"], ["--limit", "2"]],
    [["outcomes", "add"], ["--rule", "{}"]],
    [["outcomes", "delete"], ["rul_1"]]
  ]

  it.each(cases)("fos %j takes --org ORG_ID, and the bare id with a note naming --org", (before, after) => {
    const [command, ...action] = before
    const spelled = (args: ReadonlyArray<string>) => {
      const notes: Array<string> = []
      return { request: operatorRequest(command!, [...action, ...args], (line) => notes.push(line)), notes }
    }
    const flagged = spelled(["--org", "org_x", ...after])
    expect(flagged.notes).toEqual([])
    expect(flagged.request.path).toContain("org_x")
    const bare = spelled(["org_x", ...after])
    expect(bare.request).toEqual(flagged.request)
    expect(bare.notes).toEqual([`note: fos ${before.join(" ")} takes the organization as --org ORG_ID; the bare "org_x" still works`])
    // Arguments beyond the command's are refused, either way; and a bare id is the organization only if it is one.
    expect(() => spelled(["--org", "org_x", ...after, "extra", "more"])).toThrow(UsageError)
    expect(() => spelled(["org_x", ...after, "extra", "more"])).toThrow(UsageError)
    expect(() => spelled(after)).toThrow("--org is required")
  })

  it("fos tail takes --org ORG_ID, and the bare id with a note", () => {
    const notes: Array<string> = []
    const flagged = parseTailArgs(["--org", "org_x", "--json"], env, (line) => notes.push(line))
    expect(notes).toEqual([])
    expect(flagged.url).toBe("http://127.0.0.1:4000/operator/organizations/org_x/stream")
    expect(parseTailArgs(["org_x", "--json"], env, (line) => notes.push(line))).toEqual(flagged)
    expect(notes).toEqual(["note: fos tail takes the organization as --org ORG_ID; the bare \"org_x\" still works"])
  })

  it("the note goes to standard error, in one line, and the command runs", () => {
    const result = fos("reset", "org_x")
    // FOS_SERVER names a port nothing listens on: the command got as far as calling the server.
    expect(result.status).toBe(1)
    const lines = result.stderr.trimEnd().split("\n")
    expect(lines[0]).toBe("fos: note: fos reset takes the organization as --org ORG_ID; the bare \"org_x\" still works")
    expect(lines[1]).toMatch(/^fos: cannot reach the server at http:\/\/127\.0\.0\.1:9/)
    expect(result.stdout).toBe("")
  }, 30_000)
})

/**
 * Every refusal of bad usage quotes one way (Cli.ts, `quoted`): a flag, command or variable bare; a value the user
 * gave in double quotes, as JSON writes it. Each row: the invocation, and the value its message must name.
 */
describe("error messages", { timeout: 120_000 }, () => {
  const rows: ReadonlyArray<readonly [ReadonlyArray<string>, string | undefined]> = [
    [["frobnicate"], "frobnicate"],
    [["users", "frobnicate"], "users frobnicate"],
    [["orgs", "set", "--org", "org_x", "--key-creation", "maybe"], "maybe"],
    [["orgs", "set", "--org", "org_x", "--rate-limit", "fast"], "fast"],
    [["faults", "arm", "--org", "org_x", "--fault", "{nope"], "{nope"],
    [["outcomes", "add", "--org", "org_x", "--rule", "not json"], "not json"],
    [["timeline", "--org", "org_x", "txn_1", "txn_2"], "txn_2"],
    [["orgs", "list", "stray"], "stray"],
    [["timers", "--org", "org_x", "--housekeeping=yes"], "yes"],
    [["snapshots", "import", "--org", "org_x", "/nonexistent/world.json"], "/nonexistent/world.json"],
    [["keys", "create", "--org", "org_x"], undefined],
    [["reset"], undefined],
    [["users", "list", "--org"], undefined],
    [["tail", "--types", "timers"], "timers"],
    [["tail", "--org", "org_x", "extra"], "extra"],
    [["listen", "stray", "--forward-to", "http://127.0.0.1:3000"], "stray"],
    [["listen", "--forward-to", "ftp://example.test"], "ftp://example.test"],
    [["serve", "--clock", "sundial"], "sundial"],
    [["serve", "--port", "http"], "http"],
    [["serve", "--log-format", "xml"], "xml"],
    [["serve", "--store", "mysql://u:secret@db/fos"], "mysql://"],
    [["serve", "--seed", "/nonexistent/seed.json"], "/nonexistent/seed.json"],
    [["serve", "--load", "world.json"], "world.json"],
    [["serve", "--base-path", "fos"], "fos"],
    [["serve", "--random-seed", "é"], "é"],
    [["serve", "--otlp", "ftp://collector.test"], "ftp://"]
  ]

  it.each(rows)("fos %j", (args, value) => {
    const result = fos(...args)
    expect(result.status, result.stderr).toBe(2)
    expect(result.stdout).toBe("")
    const message = result.stderr.split("\n")[0]!
    expect(message).toMatch(/^fos: /)
    // No backticks, no single quotes around anything, and a flag is never inside quotes.
    expect(message).not.toMatch(/[`‘’“”]/)
    expect(message).not.toMatch(/(^|[\s(:])'|'([\s),:;]|$)/)
    expect(message).not.toMatch(/"--/)
    if (value !== undefined) expect(message).toContain(JSON.stringify(value))
    // A password in a refused value is not repeated.
    expect(result.stderr).not.toContain("u:secret")
  })
})
