/**
 * How every command that calls a server finds it and signs in, spelled one way for all of them: the server is
 * `--server URL` or FOS_SERVER, a sandbox key `--key K` or FOS_API_KEY, the operator token `--token T` or
 * FOS_OPERATOR_TOKEN. `--url` is kept as another name of `--server` (fos listen's first spelling).
 */

const defaultServer = "http://127.0.0.1:4000"

/** A flag's name, an older spelling given as the one it stands for. */
export const flagName = (name: string): string => (name === "url" ? "server" : name)

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value === "" ? undefined : value)

/** The server's origin: the flag, else FOS_SERVER, else the default; a base address given (`…/sandbox`) is taken back to it. */
export const serverOf = (flag: string | undefined, env: Record<string, string | undefined>): string =>
  (flag ?? nonEmpty(env.FOS_SERVER) ?? defaultServer).replace(/\/+$/, "").replace(/\/(sandbox|live)$/, "")

export const keyOf = (flag: string | undefined, env: Record<string, string | undefined>): string | undefined => flag ?? nonEmpty(env.FOS_API_KEY)

export const tokenOf = (flag: string | undefined, env: Record<string, string | undefined>): string | undefined =>
  flag ?? nonEmpty(env.FOS_OPERATOR_TOKEN)

/** What a command says when the server does not answer: where it looked, and both ways to name another. */
export const cannotReach = (server: string, cause?: string): string =>
  `cannot reach the server at ${server}${cause === undefined ? "" : ` (${cause})`}: is it running? Name another with --server URL or FOS_SERVER`

/** The connection flags, as fos tail's help lists them. */
export const connectionHelp = `connection:
  --server URL    the fos server (or FOS_SERVER; default ${defaultServer}); --url is another name for it
  --key K         a sandbox API key (or FOS_API_KEY): the key's own sandbox
  --token T       the operator token (or FOS_OPERATOR_TOKEN), printed by fos serve: with --org, any organization's`

/** The connection flags of the operator commands, as their help lists them. */
export const operatorConnectionHelp = `connection:
  --server URL    the fos server (or FOS_SERVER; default ${defaultServer}); --url is another name for it
  --token T       the operator token (or FOS_OPERATOR_TOKEN), printed by fos serve at its store's first start`
