import { describe, expect, it } from "@effect/vitest"
import { Schema, SchemaAST } from "effect"
import {
  ApplicationFailureCodes,
  ApplicationTypes,
  AssetAmount,
  AssetRef,
  CancellationReasons,
  DepositBlock,
  DeprecatedEventTypes,
  envelopeSchema,
  EventData,
  EventEnvelope,
  EventExamples,
  type EventPayload,
  EventType,
  EventTypes,
  OrderFailureMessages,
  OrderFailureReasonCodes,
  RailFamilies,
  SigningModes,
  TransactionCancellationMessages,
  TransactionFailureCodes,
  TransactionFailureMessages,
  TransactionSide,
  TransactionStages,
  TransactionStatusEventTypes,
  TransactionTypes,
  UtcTimestamp
} from "@fos/contract"
import * as Outbox from "../src/kernel/Outbox.ts"
import * as Wire from "../src/kernel/Wire.ts"
import { specFacts } from "./spec.ts"

// --- the spec ----------------------------------------------------------------------------------------------------

/** The spec's facts (spec-facts.json, held to the spec's text by SpecFacts.test.ts). */
const spec = specFacts()
const specEvents = new Set(spec.events)

// --- helpers -----------------------------------------------------------------------------------------------------

type AnySchema = Schema.Codec<unknown, unknown>
const dataSchema = (type: EventType): AnySchema => EventData[type] as unknown as AnySchema
const decodeData = (type: EventType, input: unknown) =>
  Schema.decodeUnknownSync(dataSchema(type), { onExcessProperty: "error" })(input)
const decodesData = (type: EventType, input: unknown): boolean => {
  try {
    decodeData(type, input)
    return true
  } catch {
    return false
  }
}
const decodes = (schema: AnySchema, input: unknown): boolean => {
  try {
    Schema.decodeUnknownSync(schema, { onExcessProperty: "error" })(input)
    return true
  } catch {
    return false
  }
}

const example = (type: EventType): Record<string, unknown> => structuredClone(EventExamples[type]) as Record<string, unknown>
const without = (value: Record<string, unknown>, ...keys: Array<string>): Record<string, unknown> => {
  const out = { ...value }
  for (const key of keys) delete out[key]
  return out
}

const envelope = (type: EventType, data: unknown = EventExamples[type]) => ({
  id: "evt_01j9xb5f7h9k1m3p5r7t9v1x3z",
  type,
  createdAt: "2026-03-01T12:00:01.000Z",
  apiVersion: "2",
  mode: "sandbox",
  data
})

const fieldsOf = (type: EventType): Record<string, { readonly ast: SchemaAST.AST }> => EventData[type].fields

const isNullable = (ast: SchemaAST.AST): boolean => ast._tag === "Union" && ast.types.some((t) => t._tag === "Null")

/** Every property signature under `ast` (through nested structs, unions and arrays), with its path. */
const propertySignatures = (ast: SchemaAST.AST, at: ReadonlyArray<string> = []): Array<[string, SchemaAST.PropertySignature]> => {
  switch (ast._tag) {
    case "Objects":
      return ast.propertySignatures.flatMap((ps) => [
        [[...at, String(ps.name)].join("."), ps] as [string, SchemaAST.PropertySignature],
        ...propertySignatures(ps.type, [...at, String(ps.name)])
      ])
    case "Union":
      return ast.types.flatMap((t) => propertySignatures(t, at))
    case "Arrays":
      return [...ast.elements, ...ast.rest].flatMap((t) => propertySignatures(t, [...at, "[]"]))
    default:
      return []
  }
}

/** Every path in a JSON-like value whose value is undefined. */
const undefinedPaths = (value: unknown, at = "$"): Array<string> => {
  if (value === undefined) return [at]
  if (value === null || typeof value !== "object") return []
  return Object.entries(value).flatMap(([k, v]) => undefinedPaths(v, `${at}.${k}`))
}

const transactionTypes = EventTypes.filter((t) => t.startsWith("transaction."))
const statusTypes = [...TransactionStatusEventTypes]

// --- tests -------------------------------------------------------------------------------------------------------

describe("event types against the spec", () => {
  it("has exactly the 48 types of the Events table", () => {
    expect(specEvents.size).toBe(48)
    expect(spec.events).toHaveLength(48)
    expect(EventTypes.length).toBe(48)
    expect(new Set(EventTypes).size).toBe(48)
    expect([...EventTypes].sort()).toEqual([...specEvents].sort())
    for (const rfi of ["published", "response_submitted", "more_info_requested", "deadline_extended", "resolved", "cancelled"]) {
      expect(specEvents.has(`rfi.${rfi}`), rfi).toBe(true)
    }
    expect(specEvents.has("wallet_signer.promoted") && specEvents.has("wallet_signer.demoted")).toBe(true)
  })

  it("has a data schema (a struct) and an example for every type, and nothing else", () => {
    expect(Object.keys(EventData).sort()).toEqual([...EventTypes].sort())
    expect(Object.keys(EventExamples).sort()).toEqual([...EventTypes].sort())
    for (const type of EventTypes) expect(EventData[type].ast._tag, type).toBe("Objects")
  })

  it("names the resource of every type: a member its data requires (the sandbox's event log finds the event by it)", () => {
    for (const type of EventTypes) {
      const member = Outbox.eventResourceMembers[type.slice(0, type.indexOf(".")) as Outbox.EventResource]
      const example = EventExamples[type] as Record<string, unknown>
      expect(Outbox.eventResourceId({ type, data: example }), type).toBe(example[member])
      expect(typeof example[member], `${type}.${member}`).toBe("string")
      const { [member]: _, ...without } = example
      expect(decodesData(type, without), `${type} without ${member}`).toBe(false)
    }
  })

  it("decodes the type names with the EventType schema only", () => {
    for (const type of EventTypes) expect(Schema.decodeUnknownSync(EventType)(type)).toBe(type)
    for (const s of ["transaction.unknown", "Transaction.created", "", "rfi.*", "wallet_signer.promoted / demoted"]) {
      expect(Schema.is(EventType)(s), s).toBe(false)
    }
  })

  it("marks transaction.awaiting_user_signature deprecated (Versioning 5), and nothing else", () => {
    expect([...DeprecatedEventTypes]).toEqual(spec.deprecatedEvents)
    expect(DeprecatedEventTypes.has("transaction.awaiting_user_signature")).toBe(true)
    expect(DeprecatedEventTypes.has("transaction.awaiting_signature")).toBe(false)
  })

  it("names the 7 status events of the ordering rules", () => {
    const names = spec.transactionStatusEvents
    expect(names.length).toBe(7)
    expect([...TransactionStatusEventTypes].sort()).toEqual([...names].sort())
  })

  it("uses the spec's enumerations", () => {
    const e = spec.enumerations
    expect([...OrderFailureReasonCodes]).toEqual(e.orderFailureReasonCodes)
    expect([...e.orderCancelledReasons].sort()).toEqual(["client_cancelled", "expired"])
    expect([...SigningModes]).toEqual(e.signingModes)
    expect([...ApplicationFailureCodes]).toEqual(e.applicationFailureCodes)
    expect(e.walletSignerRemovedReasons).toEqual(["customer_removed", "ops_removed"])
    expect(e.walletCeremonyFailedStatuses).toEqual(["failed", "cancelled"])
    expect([...RailFamilies]).toEqual(e.railFamilies)

    expect([...TransactionTypes]).toEqual(e.transactionTypes)
    expect([...TransactionStages]).toEqual(e.transactionStages)
    expect(TransactionSide.members.map((m) => m.fields.type.literal)).toEqual(e.transactionSides)
    expect([...CancellationReasons].sort()).toEqual(["client_cancelled", "expired"])

    expect([...ApplicationTypes]).toEqual(e.applicationTypes)

    expect([...TransactionFailureCodes].sort()).toEqual(e.transactionFailureCodes)
    for (const code of TransactionFailureCodes) expect(TransactionFailureMessages[code].trim(), code).not.toBe("")
    for (const code of OrderFailureReasonCodes) expect(OrderFailureMessages[code].trim(), code).not.toBe("")
    expect(DepositBlock.members.map((m) => m.fields.railFamily.literal)).toEqual([...RailFamilies])
  })
})

describe("examples", () => {
  it("decode with their data schema, with no excess keys", () => {
    for (const type of EventTypes) expect(() => decodeData(type, EventExamples[type]), type).not.toThrow()
  })

  it("decode inside their envelope, and through the union of envelopes", () => {
    for (const type of EventTypes) {
      const env = envelope(type)
      const decoded = Schema.decodeUnknownSync(envelopeSchema(type), { onExcessProperty: "error" })(env)
      expect(decoded.type, type).toBe(type)
      const any = Schema.decodeUnknownSync(EventEnvelope, { onExcessProperty: "error" })(env)
      expect(any.type, type).toBe(type)
      expect(Schema.encodeUnknownSync(EventEnvelope)(any)).toEqual(env)
    }
  })

  it("encode back to themselves with no undefined keys, as toWire and JSON would send them", () => {
    for (const type of EventTypes) {
      const decoded = decodeData(type, EventExamples[type])
      const encoded = Schema.encodeUnknownSync(dataSchema(type))(decoded)
      expect(encoded, type).toStrictEqual(EventExamples[type])
      expect(undefinedPaths(encoded), type).toEqual([])
      expect(Wire.toWire(encoded), type).toStrictEqual(encoded)
      expect(JSON.parse(JSON.stringify(encoded)), type).toStrictEqual(encoded)
      expect(JSON.stringify(encoded), type).not.toContain("undefined")
    }
  })

  it("use timestamps of the wire form and ids of the right prefix", () => {
    const timestamps = /^(occurredAt|expiresAt|createdAt|lockExpiresAt|completedAt|succeededAt|approvedAt|returnedAt|deadline)$/
    for (const type of EventTypes) {
      const data = EventExamples[type] as Record<string, unknown>
      expect(typeof data.occurredAt, type).toBe("string")
      for (const [key, value] of Object.entries(data)) {
        if (timestamps.test(key)) expect(value, `${type} ${key}`).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      }
    }
  })
})

describe("the envelope", () => {
  const type: EventType = "order.cancelled"

  it("requires every member", () => {
    for (const key of ["id", "type", "createdAt", "apiVersion", "mode", "data"]) {
      expect(decodes(envelopeSchema(type) as unknown as AnySchema, without(envelope(type), key)), key).toBe(false)
    }
  })

  it("takes apiVersion \"2\" and mode live or sandbox only", () => {
    const schema = envelopeSchema(type) as unknown as AnySchema
    expect(decodes(schema, { ...envelope(type), mode: "live" })).toBe(true)
    for (const apiVersion of [2, "1", "v2", "2.0"]) expect(decodes(schema, { ...envelope(type), apiVersion }), String(apiVersion)).toBe(false)
    for (const mode of ["test", "production", "LIVE"]) expect(decodes(schema, { ...envelope(type), mode }), mode).toBe(false)
  })

  it("needs an evt_ id and a wire timestamp", () => {
    const schema = envelopeSchema(type) as unknown as AnySchema
    for (const id of ["wdl_1", "evt_", "evt-1", 1]) expect(decodes(schema, { ...envelope(type), id }), String(id)).toBe(false)
    for (const createdAt of ["2026-03-01T12:00:00Z", "2026-03-01T12:00:00.000+00:00", "2026-02-30T12:00:00.000Z", "2026-03-01"]) {
      expect(decodes(schema, { ...envelope(type), createdAt }), createdAt).toBe(false)
    }
  })

  it("ties the type to its data: another type's data or type name is rejected", () => {
    const schema = envelopeSchema(type) as unknown as AnySchema
    expect(decodes(schema, { ...envelope(type), type: "order.failed" })).toBe(false)
    expect(decodes(schema, envelope(type, EventExamples["order.failed"]))).toBe(false)
    expect(decodes(EventEnvelope as unknown as AnySchema, { ...envelope(type), type: "order.unknown" })).toBe(false)
    expect(decodes(EventEnvelope as unknown as AnySchema, envelope("order.failed", EventExamples["order.cancelled"]))).toBe(false)
  })
})

describe("transaction events", () => {
  it("all carry the common fields, optional where the spec says so", () => {
    expect(transactionTypes.length).toBe(15)
    for (const type of transactionTypes) {
      const fields = fieldsOf(type)
      for (const key of ["transactionId", "customerId", "occurredAt"]) {
        expect(fields[key], `${type} ${key}`).toBeDefined()
        expect(SchemaAST.isOptional(fields[key]!.ast), `${type} ${key}`).toBe(false)
      }
      for (const key of ["clientReferenceId", "type", "source", "destination", "linkedOrderId"]) {
        expect(fields[key], `${type} ${key}`).toBeDefined()
        expect(SchemaAST.isOptional(fields[key]!.ast), `${type} ${key}`).toBe(true)
      }
      // Retried deliveries of older events may lack type, source and destination.
      const older = without(example(type), "type", "source", "destination", "clientReferenceId", "linkedOrderId")
      expect(decodesData(type, older), type).toBe(true)
      for (const key of ["transactionId", "customerId", "occurredAt"]) expect(decodesData(type, without(example(type), key)), `${type} ${key}`).toBe(false)
    }
  })

  it("status events require sequence, an integer of at least 1", () => {
    expect(statusTypes.length).toBe(7)
    for (const type of statusTypes) {
      expect(typeof example(type).sequence, type).toBe("number")
      expect(decodesData(type, without(example(type), "sequence")), type).toBe(false)
      for (const sequence of [0, -1, 1.5, "1", null]) expect(decodesData(type, { ...example(type), sequence }), `${type} ${sequence}`).toBe(false)
    }
    expect(decodesData("transaction.processing", { ...example("transaction.processing"), sequence: 17 })).toBe(true)
  })

  it("transaction.created is the first status event: sequence 1", () => {
    expect(decodesData("transaction.created", { ...example("transaction.created"), sequence: 2 })).toBe(false)
  })

  it("other transaction events reject sequence; events of other resources ignore it (and reject it when strict)", () => {
    for (const type of transactionTypes.filter((t) => !TransactionStatusEventTypes.has(t))) {
      expect(example(type).sequence, type).toBeUndefined()
      expect(decodesData(type, { ...example(type), sequence: 3 }), type).toBe(false)
      expect(() => Schema.decodeUnknownSync(dataSchema(type))({ ...example(type), sequence: 3 }), type).toThrow()
    }
    for (const type of EventTypes.filter((t) => !t.startsWith("transaction."))) {
      const lenient = Schema.decodeUnknownSync(dataSchema(type))({ ...example(type), sequence: 3 }) as Record<string, unknown>
      expect("sequence" in lenient, type).toBe(false)
      expect(decodesData(type, { ...example(type), sequence: 3 }), type).toBe(false)
    }
  })

  it("only transaction.created carries stage", () => {
    // Omitted when the transaction opens in no stage; never null (rule 3).
    expect(decodesData("transaction.created", without(example("transaction.created"), "stage"))).toBe(true)
    expect(decodesData("transaction.created", { ...example("transaction.created"), stage: null })).toBe(false)
    for (const stage of TransactionStages) {
      expect(decodesData("transaction.created", { ...example("transaction.created"), stage }), String(stage)).toBe(true)
    }
    expect(decodesData("transaction.created", { ...example("transaction.created"), stage: "settling" })).toBe(false)
    for (const type of transactionTypes.filter((t) => t !== "transaction.created")) {
      expect(decodesData(type, { ...example(type), stage: "under_review" }), type).toBe(false)
    }
  })

  it("failed, cancelled and rejected carry status, reasonCode and reasonMessage", () => {
    for (const type of ["transaction.failed", "transaction.cancelled", "transaction.rejected"] as const) {
      for (const key of ["status", "reasonCode", "reasonMessage"]) {
        expect(example(type)[key], `${type} ${key}`).toBeDefined()
        expect(decodesData(type, without(example(type), key)), `${type} ${key}`).toBe(false)
      }
    }
    for (const type of transactionTypes.filter((t) => !["transaction.failed", "transaction.cancelled", "transaction.rejected"].includes(t))) {
      expect(fieldsOf(type).reasonCode, type).toBeUndefined()
    }
  })

  it("transaction.rejected keeps status failed with reasonCode compliance_rejected", () => {
    const rejected = example("transaction.rejected")
    expect([rejected.status, rejected.reasonCode, rejected.failureCode]).toEqual(["failed", "compliance_rejected", "compliance_rejected"])
    expect(decodesData("transaction.rejected", { ...rejected, status: "rejected" })).toBe(false)
    expect(decodesData("transaction.rejected", { ...rejected, reasonCode: "compliance_hold" })).toBe(false)
    expect(decodesData("transaction.rejected", { ...rejected, acceptedDocumentTypes: [] })).toBe(true)
  })

  it("transaction.failed: reasonCode mirrors failureCode, omitted without one; return fields only for returned_by_sender", () => {
    const failed = example("transaction.failed")
    const plain = without(failed, "returnedAt", "returnReason", "returnCode")
    for (const code of TransactionFailureCodes) {
      const message = TransactionFailureMessages[code]
      expect(
        decodesData("transaction.failed", { ...plain, failureCode: code, reasonCode: code, failureMessage: message, reasonMessage: message }),
        code
      ).toBe(true)
    }
    const insufficient = { ...plain, failureCode: "insufficient_funds", reasonCode: "insufficient_funds" }
    expect(decodesData("transaction.failed", { ...insufficient, reasonCode: "provider_rejected" })).toBe(false)
    expect(decodesData("transaction.failed", { ...insufficient, reasonMessage: "something else" })).toBe(false)
    expect(decodesData("transaction.failed", { ...insufficient, returnCode: "R01" })).toBe(false)
    expect(decodesData("transaction.failed", { ...insufficient, failureCode: "made_up", reasonCode: "made_up" })).toBe(false)
    // A deposit sent back from an order's funding address: no failureCode and no reasonCode (rule 3: omitted, not null).
    const noCode = without(plain, "failureCode")
    expect(decodesData("transaction.failed", without(noCode, "reasonCode"))).toBe(true)
    expect(decodesData("transaction.failed", { ...noCode, reasonCode: null })).toBe(false)
    expect(decodesData("transaction.failed", { ...plain, failureCode: null })).toBe(false)
  })

  it("transaction.cancelled: cancellationReason is the reasonCode, and no failure fields", () => {
    const cancelled = example("transaction.cancelled")
    for (const reason of CancellationReasons) {
      const message = TransactionCancellationMessages[reason]
      expect(decodesData("transaction.cancelled", { ...cancelled, reasonCode: reason, cancellationReason: reason, reasonMessage: message }), reason).toBe(true)
    }
    expect(decodesData("transaction.cancelled", { ...cancelled, reasonCode: "expired" })).toBe(false)
    expect(decodesData("transaction.cancelled", { ...cancelled, failureCode: "provider_rejected" })).toBe(false)
    expect(decodesData("transaction.cancelled", { ...cancelled, failureMessage: "x" })).toBe(false)
  })

  it("transaction.completed carries fees, completedAt beside occurredAt, and payout.rail for fiat payouts", () => {
    const completed = example("transaction.completed")
    expect(decodesData("transaction.completed", without(completed, "fees"))).toBe(false)
    expect(decodesData("transaction.completed", { ...completed, fees: [] })).toBe(true)
    expect(decodesData("transaction.completed", { ...completed, completedAt: "2026-03-01T12:00:05.000Z" })).toBe(false)
    expect(decodesData("transaction.completed", { ...completed, payout: { rail: "fedwire" } })).toBe(true)
    expect(decodesData("transaction.completed", { ...completed, payout: {} })).toBe(false)
    expect(decodesData("transaction.completed", without(completed, "payout"))).toBe(true)
  })

  it("signing events carry the fields of their signing mode", () => {
    const url = "https://sign.fos.dev/requests/1"
    const cases: Array<[string, Record<string, unknown>, boolean]> = [
      ["passkey_required", { verificationUrl: url }, true],
      ["passkey_required", {}, false],
      ["passkey_required", { verificationUrl: url, signingRequestId: "sr_1" }, false],
      ["programmatic", { signingRequestId: "sr_1" }, true],
      ["programmatic", { signingRequestId: "sr_1", verificationUrl: url }, true],
      ["programmatic", { verificationUrl: url }, false],
      ["programmatic_unattended", { signingRequestId: "sr_1" }, true],
      ["programmatic_unattended", { signingRequestId: "sr_1", verificationUrl: url }, false],
      ["programmatic_unattended", {}, false]
    ]
    for (const type of ["transaction.awaiting_signature", "transaction.awaiting_recovery_signature", "transaction.awaiting_return_signature"] as const) {
      const head = without(example(type), "signingMode", "verificationUrl", "signingRequestId")
      for (const [signingMode, extra, ok] of cases) {
        expect(decodesData(type, { ...head, signingMode, ...extra }), `${type} ${signingMode} ${JSON.stringify(extra)}`).toBe(ok)
      }
    }
    expect(decodesData("transaction.awaiting_signature", { ...example("transaction.awaiting_signature"), attempt: 0 })).toBe(false)
    expect(decodesData("transaction.awaiting_signature", { ...example("transaction.awaiting_signature"), verificationUrl: "http://sign.fos.dev/x" })).toBe(false)
    expect(decodesData("transaction.quorum_met", { ...example("transaction.quorum_met"), collected: 1, required: 2 })).toBe(false)
  })
})

describe("other per-type rules", () => {
  it("application.approved: customerId except for organization_onboarding, asset only for virtual_account", () => {
    const base = without(example("application.approved"), "customerId", "asset")
    const customerId = "cus_1"
    const asset = { code: "USD" }
    for (const applicationType of ApplicationTypes) {
      const withCustomer = { ...base, applicationType, customerId, ...(applicationType === "virtual_account" ? { asset } : {}) }
      expect(decodesData("application.approved", withCustomer), applicationType).toBe(applicationType !== "organization_onboarding")
      expect(decodesData("application.approved", without(withCustomer, "customerId")), applicationType).toBe(applicationType === "organization_onboarding")
      expect(decodesData("application.approved", { ...withCustomer, asset: { code: "USDC", chain: "base" } }), applicationType).toBe(false)
    }
    expect(decodesData("application.approved", { ...base, applicationType: "virtual_account", customerId })).toBe(false)
    expect(decodesData("application.approved", { ...base, applicationType: "crypto_wallet", customerId, asset })).toBe(false)
  })

  it("application.rejected: customerId and resubmittable by applicationType", () => {
    const base = without(example("application.rejected"), "customerId", "asset", "resubmittable")
    const expectations: Record<string, { customer: "required" | "absent" | "optional"; asset: boolean; resubmittable: boolean }> = {
      customer_onboarding: { customer: "optional", asset: false, resubmittable: false },
      organization_onboarding: { customer: "absent", asset: false, resubmittable: true },
      virtual_account: { customer: "required", asset: true, resubmittable: false },
      crypto_wallet: { customer: "required", asset: false, resubmittable: false },
      customer_update: { customer: "required", asset: false, resubmittable: false }
    }
    for (const applicationType of ApplicationTypes) {
      const rule = expectations[applicationType]!
      const valid = {
        ...base,
        applicationType,
        ...(rule.customer === "absent" ? {} : { customerId: "cus_1" }),
        ...(rule.asset ? { asset: { code: "GBP" } } : {}),
        ...(rule.resubmittable ? { resubmittable: false } : {})
      }
      expect(decodesData("application.rejected", valid), applicationType).toBe(true)
      expect(decodesData("application.rejected", without(valid, "customerId")), applicationType).toBe(rule.customer !== "required")
      expect(decodesData("application.rejected", { ...valid, customerId: "cus_2" }), applicationType).toBe(rule.customer !== "absent")
      expect(decodesData("application.rejected", { ...valid, resubmittable: true }), applicationType).toBe(rule.resubmittable)
      expect(decodesData("application.rejected", without(valid, "resubmittable")), applicationType).toBe(!rule.resubmittable)
      for (const failureCode of ApplicationFailureCodes) expect(decodesData("application.rejected", { ...valid, failureCode })).toBe(true)
      expect(decodesData("application.rejected", { ...valid, failureCode: "compliance_rejected" })).toBe(false)
    }
  })

  it("order events", () => {
    const created = example("order.created")
    expect(decodesData("order.created", { ...created, quoteOptionId: "qop_1" })).toBe(false)
    expect(decodesData("order.created", { ...without(created, "depositInstructions"), quoteOptionId: "qop_1" })).toBe(true)
    expect(decodesData("order.created", without(created, "depositInstructions"))).toBe(true)
    expect(decodesData("order.created", { ...created, depositInstructions: { address: "x", assetAmount: { code: "USD", amount: "1.00" } } })).toBe(false)
    expect(decodesData("order.created", without(created, "lockExpiresAt"))).toBe(false)
    for (const reason of ["expired", "client_cancelled"]) expect(decodesData("order.cancelled", { ...example("order.cancelled"), reason })).toBe(true)
    expect(decodesData("order.cancelled", { ...example("order.cancelled"), reason: "cancelled" })).toBe(false)
    for (const reasonCode of OrderFailureReasonCodes) expect(decodesData("order.failed", { ...example("order.failed"), reasonCode }), reasonCode).toBe(true)
    expect(decodesData("order.failed", { ...example("order.failed"), reasonCode: "rail_unavailable" })).toBe(false)
    const succeeded = example("order.succeeded")
    expect(decodesData("order.succeeded", without(succeeded, "txHash"))).toBe(true)
    expect(decodesData("order.succeeded", { ...succeeded, succeededAt: "2026-03-01T11:59:59.000Z" })).toBe(false)
  })

  it("idv_link.created: url required, deprecated shortUrl optional", () => {
    const idv = example("idv_link.created")
    expect(decodesData("idv_link.created", without(idv, "shortUrl"))).toBe(true)
    expect(decodesData("idv_link.created", without(idv, "url"))).toBe(false)
    expect(decodesData("idv_link.created", { ...idv, shortUrl: null })).toBe(false)
  })

  it("wallet signer events", () => {
    const promoted = example("wallet_signer.promoted")
    expect(decodesData("wallet_signer.promoted", { ...promoted, passkeyCount: 1 })).toBe(false)
    expect(decodesData("wallet_signer.promoted", { ...promoted, credentialType: "api_key", passkeyCount: 0 })).toBe(true)
    expect(decodesData("wallet_signer.promoted", { ...promoted, role: "signer" })).toBe(false)
    expect(decodesData("wallet_signer.demoted", { ...example("wallet_signer.demoted"), role: "admin" })).toBe(false)
    const awaiting = example("wallet_signer.awaiting_admin_approval")
    expect(decodesData("wallet_signer.awaiting_admin_approval", { ...awaiting, signerId: "wsg_other" })).toBe(false)
    for (const reason of ["customer_removed", "ops_removed"]) {
      expect(decodesData("wallet_signer.removed", { ...example("wallet_signer.removed"), reason })).toBe(true)
    }
    expect(decodesData("wallet_signer.removed", { ...example("wallet_signer.removed"), reason: "expired" })).toBe(false)
    for (const status of ["failed", "cancelled"]) expect(decodesData("wallet_ceremony.failed", { ...example("wallet_ceremony.failed"), status })).toBe(true)
    expect(decodesData("wallet_ceremony.failed", { ...example("wallet_ceremony.failed"), status: "expired" })).toBe(false)
  })

  it("virtual_account.activated: a fiat asset and deposit blocks with their own currency", () => {
    const activated = example("virtual_account.activated")
    expect(decodesData("virtual_account.activated", { ...activated, asset: { code: "USDC", chain: "base" } })).toBe(false)
    expect(decodesData("virtual_account.activated", { ...activated, depositInstructions: [] })).toBe(false)
    const block = { railFamily: "us_domestic", currency: "USD", bankName: "B", accountHolderName: "A", accountNumber: "1234", routingNumber: "021000021" }
    expect(decodesData("virtual_account.activated", { ...activated, depositInstructions: [block] })).toBe(true)
    expect(decodesData("virtual_account.activated", { ...activated, depositInstructions: [{ ...block, currency: "USDC" }] })).toBe(false)
    expect(decodesData("virtual_account.activated", { ...activated, depositInstructions: [{ ...block, railFamily: "ach" }] })).toBe(false)
  })
})

describe("assets and amounts", () => {
  const amount = AssetAmount as unknown as AnySchema
  const ref = AssetRef as unknown as AnySchema

  it("carries the chain for on-chain assets and omits it for fiat", () => {
    expect(decodes(amount, { code: "USDC", amount: "1.5", chain: "solana" })).toBe(true)
    expect(decodes(amount, { code: "USDC", amount: "1.5" })).toBe(false)
    expect(decodes(amount, { code: "USD", amount: "1.50" })).toBe(true)
    expect(decodes(amount, { code: "USD", amount: "1.50", chain: "ethereum" })).toBe(false)
    expect(decodes(amount, { code: "USD", amount: "1.50", chain: null })).toBe(false)
    expect(decodes(ref, { code: "EUR" })).toBe(true)
    expect(decodes(ref, { code: "BTC", chain: "bitcoin" })).toBe(true)
    expect(decodes(ref, { code: "BTC" })).toBe(false)
  })

  it("is a non-negative decimal string within the asset's precision", () => {
    for (const ok of ["0", "10", "10.5", "10.50"]) expect(decodes(amount, { code: "USD", amount: ok }), ok).toBe(true)
    for (const bad of ["10.505", "-1.00", "1e3", " 1.00", "01.00", "", "1.", ".5"]) expect(decodes(amount, { code: "USD", amount: bad }), bad).toBe(false)
    expect(decodes(amount, { code: "USD", amount: 10.5 })).toBe(false)
    expect(decodes(amount, { code: "JPY", amount: "100" })).toBe(true)
    expect(decodes(amount, { code: "JPY", amount: "100.5" })).toBe(false)
    expect(decodes(amount, { code: "ETH", amount: "0.000000000000000001", chain: "base" })).toBe(true)
  })

  it("UtcTimestamp takes only the wire form", () => {
    const ts = UtcTimestamp as unknown as AnySchema
    expect(decodes(ts, "2026-03-01T12:00:00.000Z")).toBe(true)
    for (const bad of ["2026-03-01T12:00:00Z", "2026-03-01T12:00:00.000+01:00", "2026-13-01T12:00:00.000Z", "2026-03-01T24:00:00.000Z"]) {
      expect(decodes(ts, bad), bad).toBe(false)
    }
  })
})

describe("representation: optional fields are omitted, nullable fields are null", () => {
  const signatures = EventTypes.flatMap((type) => propertySignatures(EventData[type].ast).map(([p, ps]) => [type, p, ps] as const))

  it("no field is both optional and nullable; nullable fields are always present", () => {
    expect(signatures.length).toBeGreaterThan(300)
    for (const [type, p, ps] of signatures) {
      if (isNullable(ps.type)) expect(SchemaAST.isOptional(ps.type), `${type} ${p}`).toBe(false)
    }
  })

  it("the nullable fields are present as null in the examples that have them", () => {
    const nulls: Array<[EventType, ReadonlyArray<string>]> = [
      ["transaction.completed", ["payout", "rail"]],
      ["transaction.awaiting_sender_information", ["sourceAddress"]]
    ]
    for (const [type, at] of nulls) {
      let value: unknown = EventExamples[type]
      for (const key of at) {
        expect(value !== null && typeof value === "object" && key in value, `${type} ${at.join(".")}`).toBe(true)
        value = (value as Record<string, unknown>)[key]
      }
      expect(value, `${type} ${at.join(".")}`).toBeNull()
    }
    // Present, never omitted.
    expect(decodesData("transaction.awaiting_sender_information", without(example("transaction.awaiting_sender_information"), "sourceAddress"))).toBe(false)
    expect(decodesData("transaction.completed", { ...example("transaction.completed"), payout: {} })).toBe(false)
    expect(decodesData("wallet.created", { ...example("wallet.created"), address: null })).toBe(false)
    expect(decodesData("wallet.created", without(example("wallet.created"), "address"))).toBe(false)
    const created = example("transaction.created") as { destination: Record<string, unknown> }
    // An external_crypto side's txHash is omitted until broadcast, never null (rule 3).
    expect(decodesData("transaction.created", { ...created, destination: without(created.destination, "txHash") })).toBe(true)
    expect(decodesData("transaction.created", { ...created, destination: { ...created.destination, txHash: null } })).toBe(false)
  })

  it("every top-level optional field rejects null and undefined, and may be omitted", () => {
    let checked = 0
    for (const type of EventTypes) {
      const fields = fieldsOf(type)
      for (const [key, field] of Object.entries(fields)) {
        if (!SchemaAST.isOptional(field.ast) || field.ast._tag === "Never") continue
        const data = example(type)
        expect(decodesData(type, { ...data, [key]: null }), `${type} ${key}: null`).toBe(false)
        expect(decodesData(type, { ...data, [key]: undefined }), `${type} ${key}: undefined`).toBe(false)
        if (key in data) {
          const decoded = decodeData(type, data) as Record<string, unknown>
          expect(() => Schema.encodeUnknownSync(dataSchema(type))({ ...decoded, [key]: undefined }), `${type} ${key}`).toThrow()
        }
        checked++
      }
    }
    expect(checked).toBeGreaterThan(100)
  })

  it("the examples exercise optional fields both present and omitted", () => {
    const failed = example("transaction.failed")
    expect(failed.clientReferenceId).toBeDefined()
    expect("linkedOrderId" in failed).toBe(false)
    expect(example("idv_link.created").shortUrl).toBeDefined()
    expect("customerId" in example("idv_link.created")).toBe(false)
    expect("customerId" in example("application.rejected")).toBe(false)
  })
})

describe("types", () => {
  it("gives each type its payload", () => {
    const failed: EventPayload<"transaction.failed"> = decodeData("transaction.failed", EventExamples["transaction.failed"]) as EventPayload<"transaction.failed">
    const reason: string | undefined = failed.reasonCode
    const sequence: number = failed.sequence
    expect([reason, sequence]).toEqual(["returned_by_sender", 4])
    const env = Schema.decodeUnknownSync(EventEnvelope)(envelope("order.succeeded"))
    if (env.type === "order.succeeded") expect(env.data.transactionId).toBe(EventExamples["order.succeeded"].transactionId)
    else expect.unreachable()
  })
})
