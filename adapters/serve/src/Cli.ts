/**
 * What the command line needs before it knows which command runs: the usage and help of `fos serve`, the version,
 * and the errors every command exits with. It imports nothing of the engine, so that `fos --version`, `fos --help`
 * and the operator commands load none of it (the engine is loaded only by the commands that run it).
 */
import { readFileSync } from "node:fs"

/** The flags, for usage messages. */
export const serveUsage = `serve [--port N] [--host H] [--base-path /PATH] [--store memory|DIR|postgres://URL] [--clock system|virtual] [--clock-start ISO]
      [--seed FILE] [--load ORG=FILE]... [--random-seed N] [--insecure-webhooks] [--idempotency-retention-seconds N] [--operator-token T]
      [--store-timeout-seconds N] [--log-format pretty|json] [--quiet] [--otlp URL]`

/** What `<command> serve --help` prints: every flag with its meaning and default, and examples. */
export const serveHelp = (command: string): string => `usage: ${command} ${serveUsage}

Serves the Financial Operations Service API: sandbox at <origin>/sandbox, production at <origin>/live, the operator
surface at <origin>/operator (for the fos orgs/users/keys commands) and the reference page at <origin>/docs.

flags:
  --port N                          port to listen on; 0 picks a free one              (default: PORT, else 4000)
  --host H                          address to listen on                               (default: 127.0.0.1)
  --base-path /PATH                 serves everything under /PATH (such as /fos), for a proxy that forwards
                                    /PATH/... unchanged: sandbox at <origin>/PATH/sandbox, and every address fos
                                    hands out under it; the other fos commands are then given <origin>/PATH
                                    (default: none, the origin's root)
  --store S                         memory: nothing kept after the process ends;
                                    a directory: embedded PGlite, created if missing (a new
                                    one is a copy of a cluster kept in $XDG_CACHE_HOME/fos,
                                    else ~/.cache/fos);
                                    postgres://user:pass@host:port/db: PostgreSQL        (default: ./.fos)
  --clock system|virtual            virtual: time moves only through the clock endpoints
                                    (default: system; virtual with --random-seed)
  --clock-start ISO                 where a new store's virtual clocks start
                                    (default: now; 2026-03-03T09:00:00.000Z with --random-seed)
  --seed FILE                       organizations, users and keys to create (JSON, see the README's "Seed file"),
                                    or the JSON itself (starting with {); no demo organization then
  --load ORG=FILE                   starts with the snapshot file FILE (fos snapshots export) restored in the
                                    sandbox of the organization ORG (of the seed or the store); repeatable. Its
                                    snapshot is kept, and a later start loading the same file restores that one
                                    again (docs/snapshots.md)
  --random-seed N                   every id, secret, address, number and hash fos invents comes from N (such as
                                    42), each organization's from a stream of its own, and the clock is virtual from
                                    a fixed instant: on a fresh store, the same requests get the same answers,
                                    whatever the day (docs/testing.md)                  (default: random)
  --idempotency-retention-seconds N how long an idempotent response is replayed         (default: 2592000, 30 days)
  --store-timeout-seconds N         how long PostgreSQL may leave a statement or a connection unanswered before a
                                    request answers 503 (a network partition)           (default: 10)
  --operator-token T                the operator surface's bearer token, at least 16 characters
                                    (default: FOS_OPERATOR_TOKEN, else the store's: minted and printed at its first
                                    start, the same at later starts)
  --insecure-webhooks               allows webhook URLs on loopback hosts (http:// or https:// to 127.0.0.1, ::1,
                                    localhost), for a receiver on this machine           (default: off)
  --log-format pretty|json          standard output: lines for people, or one JSON log record per line (level,
                                    message, timestamp, fields), start lines and request log included
                                                                                         (default: pretty)
  --quiet                           no request log (the start lines are still printed)
  --otlp URL                        exports traces, metrics and logs over OTLP/HTTP (JSON) to the collector at URL
                                    (/v1/traces, /v1/metrics, /v1/logs are appended); OTEL_EXPORTER_OTLP_HEADERS
                                    and OTEL_SERVICE_NAME are read too       (default: OTEL_EXPORTER_OTLP_ENDPOINT, else off)
  --help, --version                 print this, or the version

environment: every flag also comes from a variable, FOS_ and its name (FOS_STORE, FOS_PORT, FOS_BASE_PATH,
FOS_LOAD="ORG=FILE ORG=FILE", FOS_QUIET=1, ...), as a container is configured; a flag on the command line wins.

On its first start on a store, and without --seed, fos creates a demo organization and prints its keys once.

examples:
  ${command} serve                                         # ./.fos, port 4000, the system clock
  ${command} serve --store memory --port 0                 # throwaway data, a free port
  ${command} serve --clock virtual --clock-start 2026-01-01T00:00:00Z --seed seed.json
  ${command} serve --store memory --seed seed.json --random-seed 42      # reproducible: virtual clock from 2026-03-03T09:00Z
  ${command} serve --store postgres://fos:secret@127.0.0.1:5432/fos --log-format json`

/** A bad flag or seed: the message names the problem; the process exits with status 2 having written nothing. */
export class UsageError extends Error {}

/**
 * A value the user gave, as every command's error message names it: in double quotes, as JSON writes a string. A
 * flag, a command or a variable stands bare, as typed (--org, fos users list, FOS_SERVER): its dashes or capitals
 * already set it apart, and it reads as what to type. A value is quoted because it may be anything: empty, with
 * spaces, or a word that would read as part of the sentence; JSON's quotes show each of those as it is, escapes
 * included, and are what a shell takes back. Backticks and single quotes are used by no message. An address fos
 * reports as where it listens or calls (port 4000 on 127.0.0.1, the server at http://127.0.0.1:4000) stands bare
 * too: a URL or host reads as one word, and is what the user copies. test/cli-flags.test.ts checks a table of refusals against this.
 */
export const quoted = (value: string): string => JSON.stringify(value)

/**
 * Whether `text` is an organization's id (`org_` and 1 to 64 letters or digits, @fos/contract's IdPrefixes.ts), read
 * here so that a command that only parses loads none of the engine.
 */
export const isOrganizationId = (text: string): boolean => /^org_[0-9A-Za-z]{1,64}$/.test(text)

/** How many single-character edits turn `a` into `b` (Levenshtein). */
const editDistance = (a: string, b: string): number => {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    row = next
  }
  return row[b.length]!
}

/**
 * The refusal of a flag `command` does not take (`flag` with its dashes): the closest of the `known` flags when one
 * is a slip away, and where every flag is listed (flags bare, as `quoted` says).
 */
export const unknownFlag = (flag: string, known: ReadonlyArray<string>, command: string): UsageError => {
  const name = flag.replace(/^-+/, "")
  const closest = known
    .map((k) => ({ k: k.replace(/^-+/, ""), d: editDistance(name, k.replace(/^-+/, "")) }))
    .filter(({ k, d }) => d <= Math.max(2, Math.floor(k.length / 3)))
    .sort((a, b) => a.d - b.d)[0]
  return new UsageError(`unknown flag --${name}${closest === undefined ? "" : `; did you mean --${closest.k}?`} (${command} --help lists every flag)`)
}

/**
 * fos's version: this package's own, its manifest found by module resolution (the package exports
 * "./package.json"), so that the answer is the same from src/, an installed dist/, or the server's bundle
 * (scripts/bundle-server.ts), which sits in neither package's folder.
 */
export const fosVersion = (): string =>
  (JSON.parse(readFileSync(new URL(import.meta.resolve("@fos/serve/package.json")), "utf8")) as { version: string }).version

/** What `--help` and `--version` print, when `args` asks for either (whatever else it holds); else undefined. */
export const infoRequested = (args: ReadonlyArray<string>, usage: string): string | undefined =>
  args.includes("--help") || args.includes("-h") ? usage : args.includes("--version") ? `fos ${fosVersion()}` : undefined

/** A store that cannot be opened: the message says which and why; the data is left as it was. */
export class StoreError extends Error {}

/** An address the server cannot listen on (a port in use, a port it may not take): one line, status 1. */
export class ListenError extends Error {}
