/**
 * The sandbox's scripted outcomes (simulate/Outcomes.ts): rules created, listed and deleted under
 * /sandbox/v2/simulate/outcomes, which decide how the next matching transactions end and at which phase.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { OutcomeRule, OutcomeRuleCreate, OutcomeRuleId, OutcomeRuleList, OutcomeRuleQuery, OutcomeRulesCleared } from "../simulate/Outcomes.ts"
import { documented } from "./OpenApiDocument.ts"
import { common, OpenWhenRestricted, SandboxOnly, withBody } from "./Policies.ts"

export const Outcomes = HttpApiGroup.make("outcomes")
  .add(HttpApiEndpoint.post("createOutcomeRule", "/v2/simulate/outcomes", {
    payload: OutcomeRuleCreate,
    success: OutcomeRule.pipe(HttpApiSchema.status(201)),
    error: withBody
  }).annotateMerge(documented(
    "Script an outcome",
    "Creates a rule that decides how the next matching transactions end (by customer, type, rail or chain, amount or clientReferenceId): a payout, deposit or order leg failing at its send or settlement with a rail or chain failure code, a bank payout returned after completion, or a payout held in compliance review. Applies to `count` transactions, or until deleted; at most 50 per sandbox (409 past it)."
  )))
  .add(HttpApiEndpoint.get("listOutcomeRules", "/v2/simulate/outcomes", { query: OutcomeRuleQuery, success: OutcomeRuleList, error: common }).annotateMerge(documented(
    "List outcome rules",
    "Lists the sandbox's outcome rules, oldest first, with how often each applied, the transactions it ended and how many uses remain."
  )))
  .add(HttpApiEndpoint.delete("deleteOutcomeRule", "/v2/simulate/outcomes/:ruleId", { params: { ruleId: OutcomeRuleId }, error: common }).annotateMerge(documented(
    "Delete an outcome rule",
    "Deletes one rule; a return it scheduled still happens."
  )))
  .add(HttpApiEndpoint.delete("clearOutcomeRules", "/v2/simulate/outcomes", { success: OutcomeRulesCleared, error: common }).annotateMerge(documented(
    "Delete every outcome rule",
    "Deletes every outcome rule of the sandbox and answers how many were removed."
  )))
  .annotate(OpenWhenRestricted, true)
  .annotate(SandboxOnly, true)
