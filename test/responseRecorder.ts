/**
 * Every response of the black-box suites validates against its operation's schema. The suites reach the
 * engine (or a real server) through a few helpers — support.ts's `call` and `httpCall`, onboardingFixtures.ts's
 * `clientOf`, and the fetch a suite hands to @fos/client — and each passes its fetch through `recording`. While
 * recording is on (test/responseSchemas.setup.ts turns it on for every test file, and checks what was recorded in
 * that file's afterAll), each answer's method, path, status, content type and body is kept; otherwise `recording`
 * returns the fetch as it is.
 *
 * This module stays light (no ajv, no contract): support.ts imports it in every test file.
 */

export interface RecordedResponse {
  readonly method: string
  /** The request's path, base included (`/sandbox/v2/customers`), without the query. */
  readonly path: string
  readonly status: number
  /** The Content-Type header, or "" when the answer has none. */
  readonly contentType: string
  /** The body as text ("" when empty). */
  readonly body: string
}

/** A fetch of either shape: the engine's (a Request) or the platform's (a Request, string or URL, and init). */
type Fetch = (input: any, init?: any) => Promise<Response>

const pending: Array<Promise<RecordedResponse>> = []
let on = false

/** Records from now on (the setup file calls it before a test file's tests). */
export const startRecording = (): void => {
  on = true
}

export const isRecording = (): boolean => on

/** `fetch`, recording each answer while recording is on. The answer the caller gets is untouched (a clone is read). */
export const recording = <F extends Fetch>(fetch: F): F =>
  ((input: Request | string | URL, init?: RequestInit) =>
    fetch(input, init).then((response) => {
      if (on) {
        const url = new URL(input instanceof Request ? input.url : String(input))
        const method = init?.method ?? (input instanceof Request ? input.method : "GET")
        const copy = response.clone()
        pending.push(copy.text().then((body) => ({
          method: method.toUpperCase(),
          path: url.pathname,
          status: response.status,
          contentType: response.headers.get("content-type") ?? "",
          body
        })))
      }
      return response
    })) as F

/** Every answer recorded so far in this test file, and forgets them. */
export const takeRecorded = async (): Promise<Array<RecordedResponse>> => {
  const all = await Promise.all(pending.splice(0))
  return all
}
