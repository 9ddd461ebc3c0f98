/**
 * Countries (ISO 3166-1 alpha-3) and postal addresses with the spec's rule: state is
 * required when country is USA, optional elsewhere; state codes may start with a digit; postalCode is optional.
 */
import { Schema } from "effect"
import "./Annotations.ts"
import { NonBlankString } from "./Primitives.ts"

/**
 * Every ISO 3166-1 alpha-3 code. The contract depends on effect alone, so the list is data here rather than the
 * i18n-iso-countries package (with its names in dozens of languages); a test holds it equal to that package.
 */
export const CountryCodes: ReadonlyArray<string> = `
  ABW AFG AGO AIA ALA ALB AND ARE ARG ARM ASM ATA ATF ATG AUS AUT AZE BDI BEL BEN BES BFA BGD BGR
  BHR BHS BIH BLM BLR BLZ BMU BOL BRA BRB BRN BTN BVT BWA CAF CAN CCK CHE CHL CHN CIV CMR COD COG
  COK COL COM CPV CRI CUB CUW CXR CYM CYP CZE DEU DJI DMA DNK DOM DZA ECU EGY ERI ESH ESP EST ETH
  FIN FJI FLK FRA FRO FSM GAB GBR GEO GGY GHA GIB GIN GLP GMB GNB GNQ GRC GRD GRL GTM GUF GUM GUY
  HKG HMD HND HRV HTI HUN IDN IMN IND IOT IRL IRN IRQ ISL ISR ITA JAM JEY JOR JPN KAZ KEN KGZ KHM
  KIR KNA KOR KWT LAO LBN LBR LBY LCA LIE LKA LSO LTU LUX LVA MAC MAF MAR MCO MDA MDG MDV MEX MHL
  MKD MLI MLT MMR MNE MNG MNP MOZ MRT MSR MTQ MUS MWI MYS MYT NAM NCL NER NFK NGA NIC NIU NLD NOR
  NPL NRU NZL OMN PAK PAN PCN PER PHL PLW PNG POL PRI PRK PRT PRY PSE PYF QAT REU ROU RUS RWA SAU
  SDN SEN SGP SGS SHN SJM SLB SLE SLV SMR SOM SPM SRB SSD STP SUR SVK SVN SWE SWZ SXM SYC SYR TCA
  TCD TGO THA TJK TKL TKM TLS TON TTO TUN TUR TUV TWN TZA UGA UKR UMI URY USA UZB VAT VCT VEN VGB
  VIR VNM VUT WLF WSM XKK YEM ZAF ZMB ZWE
`.trim().split(/\s+/)

const countrySet: ReadonlySet<string> = new Set(CountryCodes)

/** True for an upper-case ISO 3166-1 alpha-3 code. */
export const isCountry = (code: string): boolean => countrySet.has(code)

export const Country = Schema.String.check(
  Schema.makeFilter(isCountry, {
    fosDetail: "must be an ISO 3166-1 alpha-3 country code in upper case",
    toJsonSchema: () => ({ pattern: "^[A-Z]{3}$", examples: ["USA"] })
  })
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
