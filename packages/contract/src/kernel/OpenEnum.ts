/**
 * Enumerations that grow (docs/decisions/0002-openapi-from-the-contract.md): a module of its own, importing only Effect,
 * since the error catalog uses it and every other kernel module imports the catalog.
 */
import { Schema } from "effect"

/**
 * A value of a set that grows (the spec's Versioning rule 4: "Enumerations may gain values ... parsers should
 * tolerate new values"): one of `known`, or any other string. `known` carries its `identifier`, so the OpenAPI
 * document names the known values as a schema of their own (`ProblemType`, `EventType`, `TimerKind`) and the field
 * is `anyOf` that schema or a string: a generated client gets the known values as a type it can compare against,
 * and a validating client still accepts a value a later fos adds (docs/decisions/0002-openapi-from-the-contract.md).
 */
export const openEnum = (known: Schema.Codec<string>): Schema.Codec<string> =>
  // Typed as the string it decodes to: the known values' tuple, spelt out in every endpoint that answers a Problem,
  // would pass the length TypeScript serializes into the API's declaration.
  Schema.Union([known, Schema.String]).annotate({ description: "One of the known values, or a value added later: tolerate it." })
