/**
 * The path an engine is mounted at (`createEngine({ basePath: "/fos" })`, `fos serve --base-path /fos`): every
 * route is under it, as a server at that path would have them, and every address fos hands out carries it
 * (docs/embedding.md, "A mount path"). `""`, the default, is the origin's root.
 */
import { Context } from "effect"

/** The engine's base path: `""`, or `/` and segments with no trailing slash (`/fos`, `/api/fos`). */
export class BasePath extends Context.Reference<string>("fos/http/BasePath", { defaultValue: () => "" }) {}

/** One segment of a base path: RFC 3986's unreserved characters, and not `.` or `..`. */
const segment = /^[A-Za-z0-9._~-]+$/

/**
 * A base path as given, checked and in its one form: `undefined`, `""` and `/` are none (`""`), and one trailing
 * slash is dropped. Anything else but `/` and segments of letters, digits, `-`, `.`, `_` and `~` (so no query, no
 * fragment, no percent-encoding, no empty or dot segment) is a TypeError naming `name`, the option or flag.
 */
export const basePathOf = (given: string | undefined, name = "basePath"): string => {
  if (given === undefined || given === "" || given === "/") return ""
  const path = given.endsWith("/") ? given.slice(0, -1) : given
  const segments = path.split("/")
  if (segments[0] !== "" || segments.slice(1).some((s) => !segment.test(s) || s === "." || s === "..")) {
    throw new TypeError(
      `${name}: ${JSON.stringify(given)} is not a path such as /fos: a / and segments of letters, digits, -, ., _ and ~ (no empty or dot segment, no query, no percent-encoding)`
    )
  }
  return path
}

/**
 * The rest of `path` (as sent, query stripped) under `base`: `/sandbox/v2/...` of `/fos/sandbox/v2/...`, `""` of
 * `/fos` itself, or undefined when the path is not under the base.
 */
export const underBase = (base: string, path: string): string | undefined => {
  if (base === "") return path
  if (!path.startsWith(base)) return undefined
  const rest = path.slice(base.length)
  return rest === "" || rest.startsWith("/") ? rest : undefined
}
