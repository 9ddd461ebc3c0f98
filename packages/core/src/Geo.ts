/**
 * Countries (ISO 3166-1 alpha-3, from i18n-iso-countries) and postal addresses with the spec's rule: state is
 * required when country is USA, optional elsewhere; state codes may start with a digit; postalCode is optional.
 */
import countries from "i18n-iso-countries"
import { Schema } from "effect"
import { NonBlankString } from "./Wire.ts"

/** True for an upper-case ISO 3166-1 alpha-3 code. */
export const isCountry = (code: string): boolean => /^[A-Z]{3}$/.test(code) && countries.isValid(code)

export const Country = Schema.String.check(
  Schema.makeFilter(isCountry, { fosDetail: "must be an ISO 3166-1 alpha-3 country code in upper case" })
)

const StateCode = Schema.String.check(
  Schema.isPattern(/^[0-9A-Za-z][0-9A-Za-z -]{0,63}$/, { fosDetail: "must be a state or region code" })
)

export const Address = Schema.Struct({
  line1: NonBlankString,
  line2: Schema.optionalKey(Schema.String),
  city: NonBlankString,
  state: Schema.optionalKey(StateCode),
  postalCode: Schema.optionalKey(Schema.String),
  country: Country
}).check(
  Schema.makeFilter((a) => a.country !== "USA" || a.state !== undefined ? undefined : { path: ["state"], issue: "is required when country is USA" }, {
    fosDetail: "state is required when country is USA"
  })
)
export type Address = typeof Address.Type
