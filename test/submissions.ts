/**
 * Onboarding request bodies as plain data, with no test runner behind them, so the benches build their worlds with
 * the same submissions the tests send (test/onboardingFixtures.ts re-exports them).
 */

export const germanAddress = { line1: "Unter den Linden 1", city: "Berlin", postalCode: "10117", country: "DEU" }

/** A complete DEU submission: two company documents, one owner-controller with a passport. */
export const deuSubmission = (
  docs: { readonly register: string; readonly articles: string; readonly passport: string },
  overrides: Record<string, unknown> = {}
) => ({
  country: "DEU",
  businessInfo: {
    legalName: "Acme GmbH",
    taxId: "DE123456789",
    registrationNumber: "HRB 123456",
    incorporationDate: "2019-04-01",
    registeredAddress: germanAddress
  },
  documentIds: [docs.register, docs.articles],
  ownership: {
    persons: [{
      referenceId: "ubo-1",
      roles: ["owner", "controller"],
      ownershipPercent: 60,
      firstName: "Erika",
      lastName: "Mustermann",
      dateOfBirth: "1980-02-29",
      nationality: "DEU",
      email: "erika@acme.example",
      address: germanAddress,
      taxId: "12345678901",
      documentIds: [docs.passport]
    }]
  },
  companyClassification: { legalStructure: "gmbh", primaryIndustry: "software" },
  clientReferenceId: "acme-gmbh",
  ...overrides
})
