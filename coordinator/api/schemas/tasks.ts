/**
 * Task Specs (/v1/tasks). The creation fields are validated by coordinator/tasks/validate-task.ts,
 * which also checks what a schema cannot (stocked objects, kit references, predicates binding to an
 * instrument of the environment class); these schemas declare the same fields for the document.
 */
import { z } from "zod";
import { component, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, NullableTimestamp, queryInteger, queryText, Timestamp } from "./common.js";
import { InstructionSet, Policy } from "./run-request.js";

const ENVIRONMENT_CLASSES = ["bare", "standard", "replica", "instrumented-replica"] as const;

/** Query of GET /v1/tasks. */
export const TaskListQuery = z.object({
  limit: queryInteger("limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT),
  starting_after: queryText("starting_after", "a task id: list the tasks created before it"),
});

/** One object of `initial_conditions`. */
export const InitialCondition = z.strictObject({
  object: z.string().describe("an object the environment stocks, or kit/<name> of an available kit"),
  pose: z.tuple([z.number(), z.number(), z.number(), z.number()]).describe("[x_m, y_m, z_m, yaw_deg]"),
  tol_mm: z.number().positive().optional(),
  randomize: z.strictObject({ x_mm: z.number().min(0).optional(), y_mm: z.number().min(0).optional(), yaw_deg: z.number().min(0).optional() }).optional(),
});

/** `{<name>: <predicate expression>}`: a success predicate or a stage. */
export const Predicate = z.record(z.string(), z.string()).describe("one predicate name to its expression; it must bind to an instrument of the environment class");

const taskFields = {
  name: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/).max(64).describe("1..64 characters of a-z, 0-9 and single hyphens"),
  visibility: z.enum(["private", "published"]).optional().describe("default private"),
  environment_class: z.enum(ENVIRONMENT_CLASSES).optional().describe("Assay's addition: the class predicates bind against; default standard"),
  initial_conditions: z.record(z.string(), InitialCondition),
  success_predicates: z.array(Predicate),
  instructions: z.strictObject({ sampled_per_episode: z.array(z.string()).optional(), held_out: z.array(z.string()).optional() }).nullable().optional(),
  stages: z.array(Predicate).optional(),
  envelope: z.strictObject({ lighting: z.array(z.string()).optional(), distractors: z.string().optional(), out_of_scope: z.array(z.string()).optional() }).nullable().optional(),
  baseline: z.strictObject({ internal_trials: z.number().int().positive(), internal_rate: z.number().min(0).max(1) }).nullable().optional()
    .describe("the customer's internal trials; never published"),
};

/** POST /v1/tasks body. */
export const CreateTaskRequest = component("CreateTaskRequest", z.strictObject(taskFields));

/** POST /v1/tasks/{task_id}/amend body: any subset of the creation fields. */
export const AmendTaskRequest = component("AmendTaskRequest", z.strictObject(taskFields).partial());

/** POST /v1/tasks/{task_id}/pilot body (coordinator/tasks/pilot.ts). */
export const PilotRequest = component("PilotRequest", z.strictObject({
  robot: z.string().describe("<model>@<firmware> or <model>@latest"),
  episodes: z.number().int().min(1).max(50).optional().describe("default 10"),
  policy: Policy.optional().describe("default: the reference expert policy"),
  environment: z.string().optional().describe("default: the first environment of the task's class with the robot installed"),
  instructions: InstructionSet.optional().describe("only sampled: a pilot iterates, and held-out paraphrases are never sampled while iterating"),
}));

/** POST /v1/tasks/{task_id}/pilot response. */
export const Pilot = component("Pilot", z.strictObject({
  run_id: z.string(), robot: z.string(), episodes: z.number().int(), stream_url: z.string().describe("wss:// URL for live watching"),
}));

/** Comparison of the customer's internal rate with the pilot's interval (owner only). */
const BaselineCheck = z.strictObject({
  pilot_run_id: z.string(), pilot_n: z.number().int(), pilot_rate: z.number(), pilot_ci95: z.tuple([z.number(), z.number()]),
  internal_rate: z.number(), disagrees: z.boolean(),
});

/** The spec's Task Spec (coordinator/tasks/task-view.ts). Other accounts never see baseline or the pilot's run id. */
export const Task = component("Task", z.strictObject({
  id: z.string(),
  object: z.literal("task"),
  name: z.string(),
  rev: z.string().nullable().describe("null until frozen, then <name>@v<N>"),
  status: z.enum(["draft", "piloting", "frozen"]),
  visibility: z.enum(["private", "published"]),
  created: Timestamp,
  frozen: NullableTimestamp,
  signatures: z.array(z.string()).describe("empty until frozen; then the account's and the service's signatures"),
  environment_class: z.enum(ENVIRONMENT_CLASSES),
  initial_conditions: z.record(z.string(), InitialCondition),
  success_predicates: z.array(Predicate),
  instructions: z.strictObject({ sampled_per_episode: z.array(z.string()), held_out: z.array(z.string()) }).nullable(),
  stages: z.array(Predicate),
  envelope: z.strictObject({ lighting: z.array(z.string()).optional(), distractors: z.string().optional(), out_of_scope: z.array(z.string()).optional() }).nullable(),
  baseline: z.strictObject({ internal_trials: z.number().int(), internal_rate: z.number() }).nullable().optional().describe("owner only"),
  pilot: z.strictObject({
    run_id: z.string().optional().describe("owner only"),
    robot: z.string(),
    episodes: z.number().int(),
    amendments: z.array(z.strictObject({ at: Timestamp, fields: z.array(z.string()) })),
  }).nullable(),
  baseline_check: BaselineCheck.optional().describe("owner only, once the pilot completed and a baseline is set"),
}));
