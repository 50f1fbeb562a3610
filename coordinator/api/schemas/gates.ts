/**
 * CI gates (/v1/gates) and their checks. The gate's suite, robots and policy are validated as an
 * eval run body would be (coordinator/lifecycle/validate-run.ts), with that validation's codes.
 */
import { z } from "zod";
import { component, NullableTimestamp, Timestamp } from "./common.js";
import { Policy } from "./run-request.js";
import { REF_MAX_CHARS, ROBOTS_MAX, tooLong } from "../../json/field-bounds.js";

const GATE_FIELDS = "suite, repo, ref_pattern, policy, robots";
const required = (field: string) => `${field} is required; a gate needs ${GATE_FIELDS}`;
const REF_PATTERN = `ref_pattern must be a glob of 1..255 characters such as "refs/heads/main" or "refs/tags/v*"`;

/** POST /v1/gates body. */
export const CreateGateRequest = component("CreateGateRequest", z.strictObject({
  suite: z.string({ error: (iss) => (iss.input === undefined ? required("suite") : `suite must be a suite id "<name>@<version>"`) })
    .max(REF_MAX_CHARS, { error: `suite must be a suite id "<name>@<version>" of at most ${REF_MAX_CHARS} characters` }).describe("suite id <name>@<version> (GET /v1/suites)"),
  repo: z.string({ error: (iss) => (iss.input === undefined ? required("repo") : `repo must be "<owner>/<name>"`) })
    .max(REF_MAX_CHARS, { error: `repo must be "<owner>/<name>" of at most ${REF_MAX_CHARS} characters` }).regex(/^[\w.-]+\/[\w.-]+$/, { error: `repo must be "<owner>/<name>"` }),
  ref_pattern: z.string({ error: (iss) => (iss.input === undefined ? required("ref_pattern") : REF_PATTERN) }).min(1, { error: REF_PATTERN }).max(255, { error: REF_PATTERN })
    .describe("glob: * matches within a path segment, ** across segments"),
  policy: Policy,
  robots: z.array(z.string().max(REF_MAX_CHARS, tooLong(REF_MAX_CHARS)), { error: (iss) => (iss.input === undefined ? required("robots") : `robots must be an array of robot pins "<model>@<firmware>"`) })
    .min(1, { error: `robots must be a non-empty array of robot pins "<model>@<firmware>"` })
    .max(ROBOTS_MAX, { error: `robots must be an array of at most ${ROBOTS_MAX} robot pins "<model>@<firmware>"` }),
  baseline: z.literal("last_pass", { error: `baseline must be "last_pass" (the run of the gate's most recent passed check)` }).optional().describe("default last_pass"),
}, { error: "request body must be a JSON object {suite, repo, ref_pattern, policy, robots, baseline}" }));

/** A gate as stored (its spec) with id and created. */
export const Gate = component("Gate", z.strictObject({
  id: z.string(),
  object: z.literal("gate"),
  suite: z.string(),
  repo: z.string(),
  ref_pattern: z.string(),
  policy: Policy,
  robots: z.array(z.string()),
  baseline: z.literal("last_pass"),
  created: Timestamp,
}));

/** POST /v1/gates/{gate_id}/checks body. */
export const CreateCheckRequest = component("CreateCheckRequest", z.strictObject({
  ref: z.string({ error: `ref is required, e.g. "refs/heads/main"` }).min(1, { error: `ref is required, e.g. "refs/heads/main"` })
    .max(255, { error: `ref must be a git ref of at most 255 characters, e.g. "refs/heads/main"` }),
  commit: z.string({ error: "commit must be a hex commit id (7..64 characters)" }).max(64, { error: "commit must be a hex commit id (7..64 characters)" }).regex(/^[0-9a-f]{7,64}$/i, { error: "commit must be a hex commit id (7..64 characters)" }).optional(),
  policy: Policy.optional().describe("the build under test; default the gate's policy"),
}, { error: "request body must be a JSON object {ref, commit, policy}" }));

/** A gate check: what a CI job polls. */
export const GateCheck = component("GateCheck", z.strictObject({
  id: z.string(),
  object: z.literal("gate_check"),
  gate_id: z.string(),
  ref: z.string(),
  commit: z.string().nullable(),
  status: z.enum(["pending", "passed", "failed"]),
  run_id: z.string(),
  run_url: z.url(),
  report_url: z.url(),
  regression: z.strictObject({
    regressed: z.boolean(),
    units: z.array(z.looseObject({
      unit: z.string(),
      prior: z.strictObject({ n: z.number().int(), success_rate: z.number() }),
      current: z.strictObject({ n: z.number().int(), success_rate: z.number() }),
      regressed: z.boolean(),
      p_value: z.number().describe("the unit's own one-sided p-value"),
      p_adjusted: z.number().describe("p_value adjusted over the check's units (Holm); regressed exactly when p_adjusted <= alpha"),
      adjustment: z.enum(["holm", "benjamini-hochberg"]),
      family_size: z.number().int().min(1).describe("units compared in this check"),
      rule: z.string(),
    }).describe("one unit (robot x suite task) against the same unit of the baseline; the interval fields of the test (diff, ci, ci_level, interval_method, alpha, margin) are additional properties")),
  }).nullable().describe("null while pending, when there was no baseline yet, or when the run did not complete"),
  baseline_run_id: z.string().nullable(),
  detail: z.string().nullable().describe("why the check was decided so; null while pending"),
  created: Timestamp,
  decided_at: NullableTimestamp,
}));
