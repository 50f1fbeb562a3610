/**
 * The body of POST /v1/runs (and POST /v1/quote, which prices the same body): a union
 * discriminated on `kind`. Fields per kind follow spec section 4 and the MANDATORY/OPTIONAL lists
 * of coordinator/kinds/*.ts; kind `run` takes the fields of validate-run.ts RUN_FIELDS.
 *
 * NOTE: for now these schemas feed the OpenAPI document only; POST /v1/runs is still validated by
 * each kind's `plan` (coordinator/kinds/), which also checks what a schema cannot (pins installed
 * on a cell, presets of the chosen environment, frozen task revisions). The shared
 * blocks (Policy, Perturbation, DataPosture, EpisodesSpec, Priority, Interventions, Publish) are
 * exported separately so the run validation can reuse them.
 */
import { z } from "zod";
import { component } from "./common.js";

// The run domain's own lists (leaves that import no kind), so the document cannot drift from them.
export {
  INTERVENTIONS as INTERVENTION_VALUES, PRIORITIES as PRIORITY_VALUES, PUBLISH as PUBLISH_VALUES, RUN_KINDS as RUN_KIND_VALUES,
  STATE_CHANNELS as STATE_CHANNEL_VALUES,
} from "../../runs/run-request.js";
export { INSTRUCTION_SETS as INSTRUCTION_SET_VALUES } from "../../runs/instruction-set.js";
import { INTERVENTIONS as INTERVENTION_VALUES, PRIORITIES as PRIORITY_VALUES, PUBLISH as PUBLISH_VALUES, RUN_KINDS as RUN_KIND_VALUES, STATE_CHANNELS as STATE_CHANNEL_VALUES } from "../../runs/run-request.js";
import { INSTRUCTION_SETS as INSTRUCTION_SET_VALUES } from "../../runs/instruction-set.js";

/** Run kind. */
export const RunKind = component("RunKind", z.enum(RUN_KIND_VALUES).describe("run, eval, verify, matrix, threshold, compare or transfer"));

/** Scheduling priority tier. */
export const Priority = component("Priority", z.enum(PRIORITY_VALUES).describe("scheduling tier; default standard"));

/** How a run may be intervened on, declared before it starts. */
export const Interventions = component("Interventions", z.enum(INTERVENTION_VALUES)
  .describe("declared before the run; counts and timestamps ship in results; default none"));

/** Where a run's result is published. */
export const Publish = component("Publish", z.enum(PUBLISH_VALUES).describe("private (default) or leaderboard (needs the account's opt-in, else 403 publish_forbidden)"));

/** Which of the task's instruction lists a run samples from. */
export const InstructionSet = component("InstructionSet", z.enum(INSTRUCTION_SET_VALUES)
  .describe("sampled (default): instructions.sampled_per_episode; held_out: the task's held-out paraphrases (run, eval, matrix, transfer only)"));

/** The spec's EpisodesSpec: a positive integer, or `auto(ci=<number>, moe=<number>)`. */
export const EpisodesSpec = component("EpisodesSpec", z.union([
  z.number().int().min(1).max(10_000),
  z.string().regex(/^\s*auto\s*\(\s*ci\s*=\s*([0-9]*\.?[0-9]+)\s*,\s*moe\s*=\s*([0-9]*\.?[0-9]+)\s*\)\s*$/),
]).describe("a positive integer (at most 10000), or auto(ci=<0..1>, moe=<0..1>), which sizes n with the Wilson interval; anything else is 422 episodes_invalid"));

/** A policy's action space; `dim` must equal the robot's degrees of freedom. */
export const ActionSpace = z.strictObject({
  type: z.literal("joint_position"),
  dim: z.number().int().min(1).describe("the pinned robot's degrees of freedom"),
});

/** What a policy observes; each camera and state channel must exist in the environment. */
export const ObservationContract = z.strictObject({
  cameras: z.array(z.string()).optional().describe("camera instrument names of the environment"),
  state: z.array(z.enum(STATE_CHANNEL_VALUES)).optional(),
});

const contracts = {
  action_space: ActionSpace.optional(),
  observation_contract: ObservationContract.optional(),
};

/** A container policy: an image the cell runs, with both contracts. */
export const ContainerPolicy = z.strictObject({
  type: z.literal("container"),
  image: z.string().min(1).describe("container image reference"),
  action_space: ActionSpace,
  observation_contract: ObservationContract,
});

/** A checkpoint policy: a Hugging Face model loaded by a runtime. */
export const CheckpointPolicy = z.strictObject({
  type: z.literal("checkpoint"),
  hf: z.string().min(1).describe("Hugging Face model reference"),
  runtime: z.string().min(1).describe("the runtime that loads the checkpoint"),
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
  url: z.string().regex(/^(https?|wss?):\/\//).describe("http(s):// or ws(s):// URL of the endpoint"),
  latency_budget_ms: z.number().positive(),
  ...contracts,
});

/** The spec's Policy, discriminated on `type`. Contracts are checked before any motor moves. */
export const Policy = component("Policy", z.discriminatedUnion("type", [ContainerPolicy, CheckpointPolicy, EndpointPolicy])
  .describe("container, checkpoint or endpoint policy; action_space and observation_contract are validated against the pinned robot and scene before any motor moves"));

/** The spec's Perturbation: a seeded, versioned, replayable schedule. */
export const Perturbation = component("Perturbation", z.strictObject({
  layout_jitter_mm: z.number().min(0).optional(),
  lighting: z.array(z.string()).min(1).optional().describe("lighting presets of the environment"),
  distractors: z.string().optional().describe("a distractor set of the environment, e.g. color-blocks@1"),
  seed: z.number().int().min(0).max(0x7fffffff).optional().describe("run seed; random when absent"),
}).describe("seeded, versioned, replayable schedule; realized perturbations are recorded in each episode's /meta channel"));

/** The spec's DataPosture. */
export const DataPosture = component("DataPosture", z.strictObject({
  retention: z.string().regex(/^\d+(h|d)$/).optional().describe("<n>h or <n>d, from 1h to 365d; default 30d"),
  train_on_failures: z.boolean().optional().describe("default false"),
}));

/** `{webhook}`: a URL that receives pushes (threshold policy_stream, on_verified). */
export const WebhookTarget = z.strictObject({ webhook: z.string().regex(/^https?:\/\//).describe("http(s) URL; on_verified's must be a registered webhook endpoint") });

/** Fields every kind accepts. */
const common = {
  priority: Priority.optional(),
  perturbation: Perturbation.optional(),
  data: DataPosture.optional(),
  max_budget_usd: z.number().positive().optional().describe("hard stop, metered live; the run halts with budget_exceeded"),
  interventions: Interventions.optional(),
  publish: Publish.optional(),
  instructions: InstructionSet.optional(),
  quote_id: z.string().optional().describe("POST /v1/runs only: the quote backing this submission (the quoted body, unchanged, before it expires)"),
};

const pin = (what: string) => z.string().describe(what);
const robotPin = pin("<model>@<firmware> or <model>@latest (the resolved pin is recorded)");
const environmentRef = pin("<name>@<version> or <name> (newest version)");
const taskRef = pin("<name> (newest frozen revision), <name>@v<N>, or a task id of a frozen revision");

export const RunKindRun = z.strictObject({
  kind: z.literal("run").optional().describe("default run"),
  robot: robotPin, environment: environmentRef, task: taskRef, policy: Policy, episodes: EpisodesSpec, ...common,
}).describe("kind run: one policy on one robot pin in one environment");

export const RunKindEval = z.strictObject({
  kind: z.literal("eval"), suite: z.string().describe("suite id <name>@<version> (GET /v1/suites)"), robots: z.array(robotPin).min(1), policy: Policy,
  ...common, perturbation: z.never().optional().describe("not allowed: the suite fixes its perturbation schedule"),
}).describe("kind eval: a frozen benchmark suite on each listed robot pin");

export const RunKindVerify = z.strictObject({
  kind: z.literal("verify"), robots: z.array(robotPin).min(1).describe("verification-tier robot pins"), environment: environmentRef, task: taskRef, policy: Policy,
  scenarios: z.strictObject({
    format: z.string().describe("a simulator export format or layout-replay"),
    source: z.unknown().describe("the scenarios in that format"),
    count: z.number().int().min(1).optional().describe("scenarios to run; default all"),
  }),
  audit_sample: z.number().min(0).max(1).optional().describe("fraction of extra random episodes"),
  return_ground_truth: z.boolean().optional(),
  ...common,
}).describe("kind verify: simulator-flagged scenarios replayed on verification-tier hardware");

export const RunKindMatrix = z.strictObject({
  kind: z.literal("matrix"), robots: z.array(robotPin).min(1), environments: z.array(environmentRef).min(1), task: taskRef, policy: Policy,
  episodes_per_cell: EpisodesSpec, ...common,
}).describe("kind matrix: every robot pin x environment cell");

export const RunKindThreshold = z.strictObject({
  kind: z.literal("threshold"),
  iterate_on: robotPin.describe("soak-tier robot pin to iterate on"),
  escalate_to: robotPin.describe("verify-tier robot pin for confirmation"),
  target: z.strictObject({
    success_rate: z.number().gt(0).lt(1),
    ci: z.number().gt(0).lt(1).optional().describe("default 0.95"),
    task: taskRef,
  }),
  policy: Policy, escalate_policy: Policy.optional(), environment: environmentRef,
  monthly_cap_usd: z.number().positive(),
  policy_stream: WebhookTarget.optional(), on_verified: WebhookTarget.optional(),
  episodes: EpisodesSpec.optional().describe("maximum episodes per phase"),
  ...common,
}).describe("kind threshold: iterate on the soak tier until the target is met, then confirm on the verify tier");

export const RunKindCompare = z.strictObject({
  kind: z.literal("compare"), robot: robotPin, environment: environmentRef, task: taskRef,
  policies: z.record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/), Policy).describe("exactly two policies by name"),
  episodes: EpisodesSpec,
  paired: z.boolean().optional().describe("same initial conditions per episode pair; default true"),
  sequential: z.strictObject({
    alpha: z.number().gt(0).lt(1).optional(), beta: z.number().gt(0).lt(1).optional(), delta: z.number().gt(0).lt(0.5).optional(),
  }).optional().describe("stop early once the paired test decides (needs paired)"),
  ...common,
}).describe("kind compare: two policies on the same robot, environment and task");

export const RunKindTransfer = z.strictObject({
  kind: z.literal("transfer"), source: robotPin.describe("the embodiment the policy was trained on"),
  target: z.union([robotPin, z.strictObject({ robot: robotPin, environment: environmentRef.optional() })]).describe("destination embodiment"),
  environment: environmentRef.optional().describe("required unless target.environment is given"),
  task: taskRef, policy: Policy, episodes: EpisodesSpec, ...common,
}).describe("kind transfer: a policy moved from its source embodiment to a target");

/**
 * A POST /v1/runs (and POST /v1/quote) body. `kind` defaults to `run`, so the union is declared
 * with `anyOf` semantics over the kinds rather than a required discriminator.
 */
export const RunRequest = component("RunRequest", z.discriminatedUnion("kind", [RunKindRun, RunKindEval, RunKindVerify, RunKindMatrix, RunKindThreshold, RunKindCompare, RunKindTransfer])
  .describe("a run body, by kind (default run); 422 names the first problem, with the spec's code (contract_validation_failed, firmware_pin_unavailable, environment_unavailable, task_unknown, scenario_format_invalid, episodes_invalid)"));
