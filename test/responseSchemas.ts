/**
 * Checks recorded answers (responseRecorder.ts) against the OpenAPI document the server serves
 * (`openApiDocument`, the function behind `<base>/v2/openapi.json`), with ajv, as a client's validator would:
 * - the answer's method and path name an operation: the path, without its base (`/sandbox`, `/live`), matches one
 *   of the document's templates (a literal segment before a `{parameter}`: `/v2/payouts/requirements` is not
 *   `/v2/payouts/{id}`); an answer to a path the document does not list (`/docs`, an unknown route) is not an
 *   operation's and is only counted;
 * - its status is one the operation declares: the status itself, else its class (`4XX`), else `default`;
 * - a declared response with content has the answer's media type among its content types, and the body (JSON)
 *   validates against that content's schema; a declared response without content has an empty body.
 * Each finding names the operation and the status, and ajv's errors. test/responseSchemas.test.ts shows each kind of
 * break is found.
 */
import { Api, type Environment, openApiDocument } from "@fos/contract"
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import type { RecordedResponse } from "./responseRecorder.ts"

type Json = Record<string, any>

export interface ResponseCheck {
  /** The answers checked against an operation's response. */
  readonly checked: number
  /** Answers to paths the document does not list (not an operation's answer). */
  readonly unmatched: number
  /** One line per answer that breaks its operation's declared responses. */
  readonly findings: ReadonlyArray<string>
}

interface Route {
  readonly template: string
  readonly pattern: RegExp
  readonly parameters: number
}

const routesOf = (document: Json): Array<Route> =>
  Object.keys(document.paths)
    .map((template) => ({
      template,
      pattern: new RegExp(`^${template.split("/").map((s) => (/^\{\w+\}$/.test(s) ? "[^/]+" : s.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))).join("/")}$`),
      parameters: (template.match(/\{/g) ?? []).length
    }))
    // Literal segments first: of the templates that match, the one with fewest parameters is the route.
    .sort((a, b) => a.parameters - b.parameters)

/** A validator of a document's responses; builds each schema's ajv function once. */
export const responseValidator = (document: Json) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  const base = "https://fos.test/openapi.json"
  ajv.addSchema({ $id: base, components: document.components })
  const rebased = (schema: Json) => JSON.parse(JSON.stringify(schema).replaceAll("\"#/components/", `"${base}#/components/`))
  const compiled = new Map<string, ValidateFunction>()
  const routes = routesOf(document)

  /** The finding for one answer, or "unmatched" when no operation answered, or undefined when it fits. */
  const check = (environment: string, answer: RecordedResponse): string | "unmatched" | undefined => {
    const path = answer.path.slice(environment.length + 1)
    const method = answer.method.toLowerCase()
    const route = routes.find((r) => r.pattern.test(path) && document.paths[r.template][method] !== undefined)
    if (route === undefined) return "unmatched"
    const operation = document.paths[route.template][method]
    const where = `${answer.method} ${route.template} (${operation.operationId}) answered ${answer.status}`
    const status = String(answer.status)
    const declared = operation.responses[status] ?? operation.responses[`${status[0]}XX`] ?? operation.responses.default
    if (declared === undefined) return `${where}: the operation declares no ${status}, ${status[0]}XX or default response (it declares ${Object.keys(operation.responses).join(", ")})`
    const content: Json | undefined = declared.content
    if (content === undefined || Object.keys(content).length === 0) {
      return answer.body === "" ? undefined : `${where}: the declared response has no content, the answer has a body: ${answer.body.slice(0, 200)}`
    }
    const mediaType = answer.contentType.split(";")[0]!.trim().toLowerCase()
    const media = content[mediaType]
    if (media === undefined) return `${where}: content type "${answer.contentType}" is not among the declared ${Object.keys(content).join(", ")}`
    if (media.schema === undefined) return undefined
    if (!/json/.test(mediaType)) return undefined
    let body: unknown
    try {
      body = JSON.parse(answer.body)
    } catch {
      return `${where}: the body is not JSON: ${answer.body.slice(0, 200)}`
    }
    // One function per distinct schema (most error answers share the Problem's).
    const key = JSON.stringify(media.schema)
    let validate = compiled.get(key)
    if (validate === undefined) {
      validate = ajv.compile(rebased(media.schema))
      compiled.set(key, validate)
    }
    if (validate(body)) return undefined
    const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || "/"} ${e.message}${e.params === undefined ? "" : " " + JSON.stringify(e.params)}`)
    return `${where}: the body breaks the schema: ${errors.join("; ")}; body: ${answer.body.slice(0, 300)}`
  }
  return check
}

const validators = new Map<string, ReturnType<typeof responseValidator>>()

/** Checks `answers` against the document of the environment each was sent to (by its path's base). */
export const checkResponses = (answers: ReadonlyArray<RecordedResponse>): ResponseCheck => {
  let checked = 0
  let unmatched = 0
  const findings: Array<string> = []
  for (const answer of answers) {
    const environment = (["sandbox", "live"] as const).find((e) => answer.path.startsWith(`/${e}/`))
    if (environment === undefined) {
      unmatched++
      continue
    }
    let validator = validators.get(environment)
    if (validator === undefined) {
      // The Router's call (packages/http/src/Router.ts), with the API as the HttpApi.Top it takes.
      validator = responseValidator(openApiDocument(Api as unknown as Parameters<typeof openApiDocument>[0], environment as Environment))
      validators.set(environment, validator)
    }
    const finding = validator(environment, answer)
    if (finding === "unmatched") unmatched++
    else {
      checked++
      if (finding !== undefined) findings.push(finding)
    }
  }
  return { checked, unmatched, findings }
}
