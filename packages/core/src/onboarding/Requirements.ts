/**
 * What onboarding asks for, per country: the requirement sets `GET /v2/onboarding/requirements` returns and the
 * submission check behind 422 ONBOARDING_NOT_READY uses, so the two can never disagree. Also the classification
 * keys (`primaryIndustry`) and the feature requirements of a customer (`/asset/code` allowed values).
 *
 * The spec names the endpoint and its purpose but not the sets; these are fos's own, documented in
 * docs/onboarding.md. Every value is data, so a test can compare the endpoint with the check.
 */
import type {
  AssetCode,
  Chain,
  DocumentRequirement,
  FeatureRequirement,
  FeatureType,
  FieldRequirement,
  LegalStructure,
  PersonDocumentSlot
} from "@fos/contract"

export interface PersonRequirements {
  /** Owners holding at least this percentage must be listed and verified. */
  readonly ownerThresholdPercent: number
  /** At least this many controllers (a director, officer or other person with significant control). */
  readonly minimumControllers: number
  /** Fields every listed owner and controller must have, by pointer within the person. */
  readonly fields: ReadonlyArray<FieldRequirement>
  readonly documents: ReadonlyArray<PersonDocumentSlot>
}

export interface CountryRequirements {
  readonly country: string
  readonly legalStructures: ReadonlyArray<LegalStructure>
  readonly business: ReadonlyArray<FieldRequirement>
  readonly documents: ReadonlyArray<DocumentRequirement>
  readonly persons: PersonRequirements
  /** What an individual customer of this country gives. */
  readonly individual: { readonly fields: ReadonlyArray<FieldRequirement>; readonly documents: ReadonlyArray<PersonDocumentSlot> }
}

const field = (pointer: string, description: string, format?: FieldRequirement["format"]): FieldRequirement =>
  format === undefined ? { pointer, description } : { pointer, description, format }

const commonBusiness = [
  field("/businessInfo/legalName", "The registered legal name."),
  field("/businessInfo/registeredAddress", "The registered office address."),
  field("/businessInfo/incorporationDate", "The date of incorporation (YYYY-MM-DD).")
]

const personFields = [
  field("/firstName", "Given name."),
  field("/lastName", "Family name."),
  field("/dateOfBirth", "Date of birth (YYYY-MM-DD)."),
  field("/nationality", "Nationality (ISO 3166-1 alpha-3)."),
  field("/address", "Residential address.")
]

const identity = (acceptedTypes: ReadonlyArray<string>): PersonDocumentSlot => ({
  slot: "identity",
  acceptedTypes,
  description: "A current government-issued photo identity document."
})
const addressProof: PersonDocumentSlot = {
  slot: "address",
  acceptedTypes: ["proof_of_address"],
  description: "A utility bill or bank statement from the last three months."
}

const doc = (type: string, description: string): DocumentRequirement => ({ type, description })

/** The supported countries' requirement sets. */
export const CountryRequirementSets: Readonly<Record<string, CountryRequirements>> = {
  USA: {
    country: "USA",
    legalStructures: [
      { value: "llc", label: "Limited liability company" },
      { value: "c_corporation", label: "C corporation" },
      { value: "s_corporation", label: "S corporation" },
      { value: "partnership", label: "General or limited partnership" },
      { value: "sole_proprietorship", label: "Sole proprietorship" }
    ],
    business: [
      ...commonBusiness,
      field("/businessInfo/taxId", "The federal Employer Identification Number.", { pattern: "^\\d{2}-?\\d{7}$", example: "12-3456789" })
    ],
    documents: [doc("certificate_of_incorporation", "Articles of organization or incorporation.")],
    persons: {
      ownerThresholdPercent: 25,
      minimumControllers: 1,
      fields: [...personFields, field("/taxId", "Social Security Number or ITIN.", { pattern: "^\\d{3}-?\\d{2}-?\\d{4}$", example: "123-45-6789" })],
      documents: [identity(["passport", "drivers_license", "national_id"])]
    },
    individual: {
      fields: [...personFields, field("/taxId", "Social Security Number or ITIN.", { pattern: "^\\d{3}-?\\d{2}-?\\d{4}$", example: "123-45-6789" })],
      documents: [identity(["passport", "drivers_license", "national_id"])]
    }
  },
  GBR: {
    country: "GBR",
    legalStructures: [
      { value: "private_limited_company", label: "Private limited company (Ltd)" },
      { value: "public_limited_company", label: "Public limited company (plc)" },
      { value: "limited_liability_partnership", label: "Limited liability partnership (LLP)" },
      { value: "sole_trader", label: "Sole trader" }
    ],
    business: [
      ...commonBusiness,
      field("/businessInfo/registrationNumber", "The Companies House number.", { pattern: "^([0-9]{8}|[A-Z]{2}[0-9]{6})$", example: "01234567" }),
      field("/businessInfo/taxId", "The Unique Taxpayer Reference.", { pattern: "^\\d{10}$", example: "1234567890" })
    ],
    documents: [doc("certificate_of_incorporation", "Certificate of incorporation."), doc("shareholder_register", "The register of members or PSC register.")],
    persons: { ownerThresholdPercent: 25, minimumControllers: 1, fields: personFields, documents: [identity(["passport", "drivers_license"]), addressProof] },
    individual: { fields: personFields, documents: [identity(["passport", "drivers_license"]), addressProof] }
  },
  DEU: {
    country: "DEU",
    legalStructures: [
      { value: "gmbh", label: "Gesellschaft mit beschränkter Haftung (GmbH)" },
      { value: "ug", label: "Unternehmergesellschaft (haftungsbeschränkt)" },
      { value: "ag", label: "Aktiengesellschaft (AG)" },
      { value: "kg", label: "Kommanditgesellschaft (KG)" },
      { value: "einzelunternehmen", label: "Einzelunternehmen" }
    ],
    business: [
      ...commonBusiness,
      field("/businessInfo/registrationNumber", "The commercial register number (Handelsregister).", { pattern: "^HR[AB] ?\\d{1,6}( ?[A-Z]{1,2})?$", example: "HRB 123456" }),
      field("/businessInfo/taxId", "The VAT identification number.", { pattern: "^DE\\d{9}$", example: "DE123456789" })
    ],
    documents: [
      doc("certificate_of_incorporation", "An extract of the commercial register (Handelsregisterauszug)."),
      doc("articles_of_association", "The articles of association (Gesellschaftsvertrag).")
    ],
    persons: { ownerThresholdPercent: 25, minimumControllers: 1, fields: personFields, documents: [identity(["passport", "national_id"])] },
    individual: { fields: personFields, documents: [identity(["passport", "national_id"]), addressProof] }
  },
  SGP: {
    country: "SGP",
    legalStructures: [
      { value: "private_limited", label: "Private company limited by shares (Pte. Ltd.)" },
      { value: "public_limited", label: "Public company limited by shares" },
      { value: "limited_liability_partnership", label: "Limited liability partnership" },
      { value: "sole_proprietorship", label: "Sole proprietorship" }
    ],
    business: [
      ...commonBusiness,
      field("/businessInfo/taxId", "The Unique Entity Number (UEN).", { pattern: "^(\\d{8}[A-Z]|\\d{9}[A-Z]|[TSR]\\d{2}[A-Z]{2}\\d{4}[A-Z])$", example: "201912345K" })
    ],
    documents: [doc("certificate_of_incorporation", "The ACRA business profile."), doc("shareholder_register", "The register of members.")],
    persons: { ownerThresholdPercent: 25, minimumControllers: 1, fields: personFields, documents: [identity(["passport", "national_id"]), addressProof] },
    individual: { fields: personFields, documents: [identity(["passport", "national_id"]), addressProof] }
  },
  BRA: {
    country: "BRA",
    legalStructures: [
      { value: "ltda", label: "Sociedade limitada (Ltda.)" },
      { value: "sa", label: "Sociedade anônima (S.A.)" },
      { value: "eireli", label: "Empresa individual de responsabilidade limitada" },
      { value: "mei", label: "Microempreendedor individual (MEI)" }
    ],
    business: [
      ...commonBusiness,
      field("/businessInfo/taxId", "The CNPJ (14 digits, check digits verified).", { pattern: "^\\d{2}\\.?\\d{3}\\.?\\d{3}/?\\d{4}-?\\d{2}$", example: "11.222.333/0001-81" })
    ],
    documents: [
      doc("articles_of_association", "The contrato social or bylaws."),
      doc("tax_registration", "The CNPJ registration card (cartão CNPJ).")
    ],
    persons: {
      ownerThresholdPercent: 25,
      minimumControllers: 1,
      fields: [...personFields, field("/taxId", "The CPF (11 digits, check digits verified).", { pattern: "^\\d{3}\\.?\\d{3}\\.?\\d{3}-?\\d{2}$", example: "123.456.789-09" })],
      documents: [identity(["passport", "national_id", "drivers_license"])]
    },
    individual: {
      fields: [...personFields, field("/taxId", "The CPF (11 digits, check digits verified).", { pattern: "^\\d{3}\\.?\\d{3}\\.?\\d{3}-?\\d{2}$", example: "123.456.789-09" })],
      documents: [identity(["passport", "national_id", "drivers_license"])]
    }
  }
}

/** Brazil's CNPJ and CPF carry two mod-11 check digits; a typo is caught before review. */
const brazilCheckDigitsOk = (digits: string): boolean => {
  const nums = [...digits].map(Number)
  const checkDigit = (body: ReadonlyArray<number>, weights: ReadonlyArray<number>) => {
    const sum = body.reduce((acc, n, i) => acc + n * weights[i]!, 0)
    const rest = sum % 11
    return rest < 2 ? 0 : 11 - rest
  }
  if (new Set(nums).size === 1) return false
  if (nums.length === 14) {
    const w1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    const w2 = [6, ...w1]
    return checkDigit(nums.slice(0, 12), w1) === nums[12] && checkDigit(nums.slice(0, 13), w2) === nums[13]
  }
  if (nums.length === 11) {
    const w1 = [10, 9, 8, 7, 6, 5, 4, 3, 2]
    const w2 = [11, ...w1]
    return checkDigit(nums.slice(0, 9), w1) === nums[9] && checkDigit(nums.slice(0, 10), w2) === nums[10]
  }
  return false
}

/** Whether `value` satisfies a field's format (and, for Brazil's tax ids, its check digits). */
export const matchesFormat = (country: string, requirement: FieldRequirement, value: string): boolean => {
  if (requirement.format === undefined) return true
  if (!new RegExp(requirement.format.pattern).test(value)) return false
  if (country === "BRA" && requirement.pointer.endsWith("/taxId")) return brazilCheckDigitsOk(value.replace(/\D/g, ""))
  return true
}

// --- classification keys ------------------------------------------------------------------------------------------

/**
 * The `primaryIndustry` keys. A key can be retired (kept so old applications still read) or not selectable (a
 * grouping heading); neither may be chosen, and a key of another kind (a legal structure) is not an industry.
 * Any of those is 400 INVALID_POLICY_SUBJECT.
 */
export interface ClassificationKey {
  readonly key: string
  readonly label: string
  readonly status: "selectable" | "retired" | "heading"
}

export const PrimaryIndustries: ReadonlyArray<ClassificationKey> = [
  { key: "financial_services", label: "Financial services", status: "heading" },
  { key: "payments", label: "Payments and money transmission", status: "selectable" },
  { key: "lending", label: "Lending", status: "selectable" },
  { key: "investment_management", label: "Investment management", status: "selectable" },
  { key: "technology", label: "Technology", status: "heading" },
  { key: "software", label: "Software and SaaS", status: "selectable" },
  { key: "marketplaces", label: "Online marketplaces", status: "selectable" },
  { key: "commerce", label: "Commerce", status: "heading" },
  { key: "ecommerce", label: "E-commerce retail", status: "selectable" },
  { key: "wholesale_trade", label: "Wholesale trade", status: "selectable" },
  { key: "import_export", label: "Import and export", status: "selectable" },
  { key: "services", label: "Services", status: "heading" },
  { key: "professional_services", label: "Professional services", status: "selectable" },
  { key: "travel", label: "Travel and hospitality", status: "selectable" },
  { key: "education", label: "Education", status: "selectable" },
  { key: "nonprofit", label: "Non-profit organizations", status: "selectable" },
  { key: "manufacturing", label: "Manufacturing", status: "selectable" },
  { key: "crypto_exchange", label: "Crypto exchange (retired: use payments or investment_management)", status: "retired" }
]

export const selectableIndustries = PrimaryIndustries.filter((k) => k.status === "selectable")

/** Why a classification key cannot be chosen, or undefined when it can. */
export const industryProblem = (key: string, country: string): string | undefined => {
  const found = PrimaryIndustries.find((k) => k.key === key)
  if (found === undefined) {
    const isLegalStructure = CountryRequirementSets[country]?.legalStructures.some((s) => s.value === key) ?? false
    return isLegalStructure ? "is a legal structure, not an industry key" : "is not a known industry key"
  }
  if (found.status === "retired") return "is a retired industry key"
  if (found.status === "heading") return "is a grouping heading, not a selectable industry key"
  return undefined
}

// --- feature requirements -------------------------------------------------------------------------------------------

/**
 * The currencies a virtual account collects, by the customer's country: EUR and USD for all, GBP in Europe (the
 * providers fos models hold GBP accounts for customers in GBR and DEU only).
 */
export const virtualAccountCurrencies = (country: string): ReadonlyArray<AssetCode> =>
  offeredCurrencies.filter((code) => code !== "GBP" || gbpCountries.has(country))

const offeredCurrencies: ReadonlyArray<AssetCode> = ["EUR", "GBP", "USD"]
const gbpCountries: ReadonlySet<string> = new Set(["GBR", "DEU"])

/** True for a currency some customer's virtual account collects (`virtualAccountCurrencies` of some country). */
export const virtualAccountCurrencyOffered = (code: string): boolean => offeredCurrencies.includes(code as AssetCode)

/** The assets a crypto wallet application may request, with their chains. */
export const cryptoWalletAssets: ReadonlyArray<{ readonly code: AssetCode; readonly chains: ReadonlyArray<Chain> }> = [
  { code: "USDC", chains: ["ethereum", "base", "polygon", "solana", "stellar"] },
  { code: "USDT", chains: ["ethereum", "tron", "polygon"] },
  { code: "ETH", chains: ["ethereum", "base"] },
  { code: "SOL", chains: ["solana"] }
]

/**
 * Where crypto wallets are not offered: a customer based here gets 422 on a crypto_wallet application, and no
 * event. New York (BitLicense) by state; by country, none of the onboarding countries, but the check is data.
 */
export const cryptoIneligible: { readonly countries: ReadonlyArray<string>; readonly usStates: ReadonlyArray<string> } = {
  countries: [],
  usStates: ["NY"]
}

/** Whether a crypto wallet may be offered to this customer (its jurisdiction: country, and US state). */
export const cryptoEligible = (customer: { readonly country: string; readonly state?: string | undefined }): boolean =>
  !cryptoIneligible.countries.includes(customer.country) &&
  !(customer.country === "USA" && customer.state !== undefined && cryptoIneligible.usStates.includes(customer.state.toUpperCase()))

export const featureRequirements = (type: FeatureType, country: string): ReadonlyArray<FeatureRequirement> =>
  type === "virtual_account"
    ? [
      { pointer: "/asset/code", required: true, description: "The currency the account collects.", allowedValues: virtualAccountCurrencies(country) },
      { pointer: "/clientReferenceId", required: false, description: "Your reference for the application." }
    ]
    : [
      { pointer: "/asset/code", required: true, description: "The asset the wallet holds.", allowedValues: cryptoWalletAssets.map((a) => a.code) },
      {
        pointer: "/asset/chain",
        required: true,
        description: "The chain of the asset.",
        allowedValues: [...new Set(cryptoWalletAssets.flatMap((a) => a.chains))]
      },
      { pointer: "/clientReferenceId", required: false, description: "Your reference for the application." }
    ]
