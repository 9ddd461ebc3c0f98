/**
 * Schema annotations fos adds: the error code a failed check maps to, and the detail to report without
 * echoing the rejected value.
 */
import type { ErrorCode } from "./Errors.ts"

declare module "effect/Schema" {
  namespace Annotations {
    interface Annotations {
      /** The problem `type` when this check fails (VALIDATION_ERROR when absent). */
      readonly fosCode?: ErrorCode | undefined
      /** What the value must be, for `errors[].detail`; never includes the rejected value. */
      readonly fosDetail?: string | undefined
    }
  }
}

export {}
