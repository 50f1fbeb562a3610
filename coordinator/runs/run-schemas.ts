/**
 * The shapes of a run body every kind shares, declared once with zod: Policy, Perturbation,
 * DataPosture, EpisodesSpec, the enums and the fields every kind accepts. A kind's module
 * (coordinator/kinds/) declares its whole body from these; validation (lifecycle/validate-run.ts) and
 * the OpenAPI document (api/schemas/run-request.ts) both come from those declarations. What a
 * schema cannot know (pins installed on a cell, the scene's presets and instruments, frozen task
 * revisions) the kinds check after the shape passed.
 */
import { z } from "zod";
import { component } from "../json/schema-components.js";
import {
  boundedRecord, CHANNELS_MAX, IMAGE_MAX_CHARS, NAME_MAX_CHARS, REF_MAX_CHARS, tooLong, tooMany, URL_MAX_CHARS,
} from "../json/field-bounds.js";
import { INSTRUCTION_SETS } from "./instruction-set.js";
import { LABEL_FIELDS } from "./run-labels.js";
import { INTERVENTIONS, PRIORITIES, PUBLISH, RUN_KINDS, STATE_CHANNELS } from "./run-request.js";

/** Run kind. */
export const RunKind = component("RunKind", z.enum(RUN_KINDS).describe("run, eval, verify, matrix, threshold, compare or transfer"));

/** Scheduling priority tier. */
export const Priority = component("Priority", z.enum(PRIORITIES).describe("scheduling tier; default standard"));

/** How a run may be intervened on, declared before it starts. */
export const Interventions = component("Interventions", z.enum(INTERVENTIONS)
  .describe("declared before the run; counts and timestamps ship in results; default none"));

/** Where a run's result is published. */
export const Publish = component("Publish", z.enum(PUBLISH).describe("private (default) or leaderboard (needs the account's opt-in, else 403 publish_forbidden)"));

/** Which of the task's instruction lists a run samples from. */
export const InstructionSet = component("InstructionSet", z.enum(INSTRUCTION_SETS)
  .describe("sampled (default): instructions.sampled_per_episode; held_out: the task's held-out paraphrases (run, eval, matrix, transfer only)"));

/** The spec's EpisodesSpec: a positive integer, or `auto(ci=<number>, moe=<number>)`. */
const EPISODES_ERROR = { error: "must be a positive integer or auto(ci=<0..1>, moe=<0..1>)" };
export const EpisodesSpec = component("EpisodesSpec", z.union([
  z.number(EPISODES_ERROR).int(EPISODES_ERROR).min(1, EPISODES_ERROR).max(10_000, EPISODES_ERROR),
  z.string(EPISODES_ERROR).max(64, EPISODES_ERROR).regex(/^\s*auto\s*\(\s*ci\s*=\s*([0-9]*\.?[0-9]+)\s*,\s*moe\s*=\s*([0-9]*\.?[0-9]+)\s*\)\s*$/, EPISODES_ERROR),
], EPISODES_ERROR)
  .describe("a positive integer (at most 10000), or auto(ci=<0..1>, moe=<0..1>), which sizes n with the Wilson interval; anything else is 422 episodes_invalid"));

/** A policy's action space; `dim` must equal the robot's degrees of freedom. */
/** Units of joint values a policy acts and observes in (docs/policies.md, "LeRobot policies, unchanged"). */
export const JOINT_UNITS = ["radians", "lerobot"] as const;
const JointUnits = z.enum(JOINT_UNITS, { error: "must be radians (the default) or lerobot (LeRobot's calibrated SO-101 units; so101 only)" });

export const ActionSpace = z.strictObject({
  type: z.literal("joint_position"),
  dim: z.number().int().min(1).describe("the pinned robot's degrees of freedom"),
  units: JointUnits.optional().describe("radians (default) or lerobot: LeRobot's SO-101 units from the cell's imported LeRobot calibration (so101 only)"),
  use_degrees: z.boolean({ error: "must be true or false, as the policy's LeRobot robot config had it" }).optional()
    .describe("with units lerobot: LeRobot's SOFollowerConfig.use_degrees (default true: body joints in degrees; false: -100..100); the gripper is 0..100 either way"),
});

/** What a policy observes; each camera and state channel must exist in the environment. */
export const ObservationContract = z.strictObject({
  cameras: z.array(z.string().max(NAME_MAX_CHARS, tooLong(NAME_MAX_CHARS))).max(CHANNELS_MAX, tooMany(CHANNELS_MAX)).optional().describe("camera instrument names of the environment"),
  // Which channels exist, and whether the scene has their instrument, is checked against the environment.
  state: z.array(z.string().max(NAME_MAX_CHARS, tooLong(NAME_MAX_CHARS))).max(CHANNELS_MAX, tooMany(CHANNELS_MAX)).optional().describe(`state channels: ${STATE_CHANNELS.join(", ")}; each needs its instrument in the environment`),
  units: JointUnits.optional().describe("units of the joint positions the policy is shown: radians (default) or lerobot (so101 only; body joints as action_space.use_degrees says)"),
});

const contracts = {
  action_space: ActionSpace.optional(),
  observation_contract: ObservationContract.optional(),
};

/** A container policy: an image the cell runs, with both contracts. */
export const ContainerPolicy = z.strictObject({
  type: z.literal("container"),
  image: z.string().min(1).max(IMAGE_MAX_CHARS, tooLong(IMAGE_MAX_CHARS)).describe("container image reference"),
  action_space: ActionSpace,
  observation_contract: ObservationContract,
});

/** A checkpoint policy: a Hugging Face model loaded by a runtime. */
export const CheckpointPolicy = z.strictObject({
  type: z.literal("checkpoint"),
  hf: z.string().min(1).max(REF_MAX_CHARS, tooLong(REF_MAX_CHARS)).describe("Hugging Face model reference"),
  runtime: z.string().min(1).max(NAME_MAX_CHARS, tooLong(NAME_MAX_CHARS)).describe("the runtime that loads the checkpoint"),
  inference: z.strictObject({
    action_horizon: z.number().int().min(1).optional(),
    chunk_size: z.number().int().min(1).optional(),
    temp: z.number().min(0).optional(),
  }).optional(),
  ...contracts,
});

/** An endpoint policy: the service calls the customer's endpoint within a latency budget. */
export const EndpointPolicy = z.strictObject({
  type: z.literal("endpoint"),
  url: z.string().max(URL_MAX_CHARS, tooLong(URL_MAX_CHARS)).regex(/^(https?|wss?):\/\//, { error: "must be an http(s):// or ws(s):// URL" }).describe("http(s):// or ws(s):// URL of the endpoint"),
  latency_budget_ms: z.number({ error: (issue) => (issue.input === undefined ? "is required for an endpoint policy: a positive number of milliseconds" : "must be a positive number of milliseconds") })
    .positive({ error: "must be a positive number of milliseconds" }),
  protocol: z.enum(["json", "openpi"], { error: "must be json (Assay's JSON wire, the default) or openpi (openpi's WebSocket and MessagePack protocol)" }).optional()
    .describe("the wire the endpoint speaks; default json (docs/policies.md)"),
  observation_map: boundedRecord(z.unknown(), { maxEntries: CHANNELS_MAX }, { error: "must be an object: {preset?, images?, state?, gripper?, prompt?, resize?}" }).optional()
    .describe("openpi: which server key receives each camera, the state, the gripper and the prompt; presets droid, aloha and lerobot (docs/policies.md)"),
  inference: z.strictObject({
    action_horizon: z.number({ error: "must be a positive integer" }).int({ error: "must be a positive integer" }).min(1, { error: "must be a positive integer" }).optional(),
  }).optional().describe("openpi: rows of each returned chunk executed before asking again; default the whole chunk"),
  ...contracts,
});

/** The spec's Policy, discriminated on `type`. Contracts are checked before any motor moves. */
export const Policy = component("Policy", z.discriminatedUnion("type", [ContainerPolicy, CheckpointPolicy, EndpointPolicy])
  .describe("container, checkpoint or endpoint policy; action_space and observation_contract are validated against the pinned robot and scene before any motor moves"));

/** The spec's Perturbation: a seeded, versioned, replayable schedule. */
export const Perturbation = component("Perturbation", z.strictObject({
  layout_jitter_mm: z.number({ error: "must be a number >= 0 (millimetres)" }).min(0, { error: "must be a number >= 0 (millimetres)" }).optional(),
  lighting: z.array(z.string().max(NAME_MAX_CHARS, tooLong(NAME_MAX_CHARS))).min(1).max(CHANNELS_MAX, tooMany(CHANNELS_MAX)).optional().describe("lighting presets of the environment"),
  distractors: z.string().max(NAME_MAX_CHARS, tooLong(NAME_MAX_CHARS)).optional().describe("a distractor set of the environment, e.g. color-blocks@1"),
  seed: z.number({ error: "must be an integer 0..2147483647" }).int({ error: "must be an integer 0..2147483647" }).min(0, { error: "must be an integer 0..2147483647" })
    .max(0x7fffffff, { error: "must be an integer 0..2147483647" }).optional().describe("run seed; random when absent"),
}).describe("seeded, versioned, replayable schedule; realized perturbations are recorded in each episode's /meta channel"));

/** The spec's DataPosture. */
export const DataPosture = component("DataPosture", z.strictObject({
  retention: z.string({ error: 'must be a duration from "1h" to "365d" written as <n>h or <n>d' })
    .max(16, { error: 'must be a duration from "1h" to "365d" written as <n>h or <n>d' })
    .regex(/^\d+(h|d)$/, { error: 'must be a duration from "1h" to "365d" written as <n>h or <n>d' }).optional().describe("<n>h or <n>d, from 1h to 365d; default 30d"),
  train_on_failures: z.boolean({ error: "must be true or false" }).optional().describe("default false"),
}));

/** `{webhook}`: a URL that receives pushes (threshold policy_stream, on_verified). */
export const WebhookTarget = z.strictObject({ webhook: z.string({ error: "must be an http(s) URL" }).max(URL_MAX_CHARS, tooLong(URL_MAX_CHARS)).regex(/^https?:\/\//, { error: "must be an http(s) URL" }).describe("http(s) URL; on_verified's must be a registered webhook endpoint") });

/** Fields every kind accepts (coordinator/runs/common-fields.ts checks what depends on the scene). */
/** *Added*: a success classifier that judges a task's person-judged predicate (operator.success) first (docs/judges.md). */
const shareOf = (what: string) => z.number({ error: `must be a number from 0 to 1 (${what})` }).min(0, { error: `must be a number from 0 to 1 (${what})` }).max(1, { error: `must be a number from 0 to 1 (${what})` });
export const Judge = component("Judge", z.strictObject({
  url: z.string({ error: "is required: the http(s):// URL Assay POSTs each finished episode to" }).max(URL_MAX_CHARS, tooLong(URL_MAX_CHARS))
    .regex(/^https?:\/\//, { error: "must be an http(s):// URL" }).describe("http(s):// URL of the judge (docs/judges.md: the wire)"),
  confidence_threshold: shareOf("a verdict less confident than this also goes to a person").optional()
    .describe("a verdict whose confidence is below this also goes to a person at the operator station; default 0.8"),
  audit_fraction: shareOf("the share of episodes a person also judges").optional()
    .describe("the share of episodes a person also judges whatever the judge's confidence (the audit sample, drawn from each episode's seed); default 0.1"),
  timeout_s: z.number({ error: "must be a number of seconds in (0, 60]" }).positive({ error: "must be a number of seconds in (0, 60]" }).max(60, { error: "must be a number of seconds in (0, 60]" }).optional()
    .describe("how long the cell waits for the judge's answer; default 10 (a judge that does not answer sends the episode to a person)"),
}).describe("a success classifier (AutoEval-style) for a task judged by a person (operator.success): it judges each episode from its final frames, a person also judges the uncertain ones and an audit sample; docs/judges.md"));

export const COMMON_RUN_FIELDS = {
  priority: Priority.optional(),
  perturbation: Perturbation.optional(),
  data: DataPosture.optional(),
  max_budget_usd: z.number({ error: "must be a positive number of US dollars" }).positive({ error: "must be a positive number of US dollars" }).optional().describe("hard stop, metered live; the run halts with budget_exceeded"),
  interventions: Interventions.optional(),
  publish: Publish.optional(),
  instructions: InstructionSet.optional(),
  judge: Judge.optional(),
  // *Added*: a title and metadata of the submitter's own (coordinator/runs/run-labels.ts).
  ...LABEL_FIELDS,
};

/** *Added*: the name a leaderboard shows for the run's policy (kinds run and eval). */
const policyNameMessage = "policy_name must be 1..80 characters of letters, digits, spaces and . , _ - : / @ ( )";
export const PolicyName = z.string({ error: policyNameMessage }).trim().min(1, { error: policyNameMessage }).max(80, { error: policyNameMessage })
  .regex(/^[\p{L}\p{N} .,_:\/@()-]+$/u, { error: policyNameMessage })
  .describe("the name leaderboards show for this policy when the run is published; default: the container image, the checkpoint's hf, or \"endpoint policy\"");

const pin = (what: string) => z.string().max(REF_MAX_CHARS, tooLong(REF_MAX_CHARS)).describe(what);
export const robotPin = pin("<model>@<firmware> or <model>@latest (the resolved pin is recorded)");
export const environmentRef = pin("<name>@<version> or <name> (newest version)");
export const taskRef = pin("<name> (newest frozen revision), <name>@v<N>, or a task id of a frozen revision");
