/**
 * The body of POST /v1/runs (and POST /v1/quote, which prices the same body without `quote_id`):
 * a union discriminated on `kind`, made from each kind's own declaration (coordinator/kinds/*.ts
 * `schema`, registered in coordinator/kinds/registry.ts). Validation uses the same declarations
 * (coordinator/lifecycle/validate-run.ts), so the document cannot drift from what is accepted. The
 * shared blocks live in coordinator/runs/run-schemas.ts and are re-exported here for the other
 * resource areas.
 */
import { z } from "zod";
import { allKinds } from "../../kinds/registry.js";
import { component } from "./common.js";
import { REF_MAX_CHARS, tooLong } from "../../json/field-bounds.js";

// The run domain's own lists (leaves that import no kind), so the document cannot drift from them.
export {
  INTERVENTIONS as INTERVENTION_VALUES, PRIORITIES as PRIORITY_VALUES, PUBLISH as PUBLISH_VALUES, RUN_KINDS as RUN_KIND_VALUES,
  STATE_CHANNELS as STATE_CHANNEL_VALUES,
} from "../../runs/run-request.js";
export { INSTRUCTION_SETS as INSTRUCTION_SET_VALUES } from "../../runs/instruction-set.js";

export {
  ActionSpace, CheckpointPolicy, COMMON_RUN_FIELDS, ContainerPolicy, DataPosture, EndpointPolicy, EpisodesSpec, InstructionSet, Interventions,
  ObservationContract, Perturbation, Policy, Priority, Publish, RunKind, WebhookTarget,
} from "../../runs/run-schemas.js";

const kindBodies = () => allKinds().map((kind) => kind.schema) as unknown as [z.ZodObject, ...z.ZodObject[]];

/** A POST /v1/quote body: a run body of any kind (`kind` defaults to `run`). */
export const RunBody = component("RunBody", z.discriminatedUnion("kind", kindBodies())
  .describe("a run body, by kind (default run); 422 names the first problem, with the spec's code (contract_validation_failed, firmware_pin_unavailable, environment_unavailable, task_unknown, scenario_format_invalid, episodes_invalid)"));

/** A POST /v1/runs body: a run body plus the `quote_id` of the quote backing it. */
export const RunRequest = component("RunRequest", z.discriminatedUnion("kind", kindBodies().map((body) => body.extend({
  quote_id: z.string().max(REF_MAX_CHARS, tooLong(REF_MAX_CHARS)).optional().describe("the quote backing this submission (the quoted body, unchanged, before it expires)"),
})) as unknown as [z.ZodObject, ...z.ZodObject[]]).describe("a run body (see RunBody) plus quote_id"));
