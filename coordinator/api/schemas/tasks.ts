/**
 * Task Specs (/v1/tasks). The request bodies are declared in coordinator/tasks/task-schemas.ts, where
 * the task operations check them; the responses and the list query are declared here.
 */
import { z } from "zod";
import { component, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, NullableTimestamp, queryInteger, queryText, Timestamp } from "./common.js";
import { ENVIRONMENT_CLASSES, type EnvironmentClass } from "../../catalog/environments.js";

/** Query of GET /v1/tasks. */
export const TaskListQuery = z.object({
  limit: queryInteger("limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT),
  starting_after: queryText("starting_after", "a task id: list the tasks created before it"),
});

export { AmendTaskRequest, CreateTaskRequest, InitialCondition, PilotRequest, Predicate } from "../../tasks/task-schemas.js";
import { InitialCondition, Predicate } from "../../tasks/task-schemas.js";

/** POST /v1/tasks/{task_id}/pilot response. */
export const Pilot = component("Pilot", z.strictObject({
  run_id: z.string(), robot: z.string(), episodes: z.number().int(), stream_url: z.string().nullable().describe("wss:// URL for live watching, whose token names this key and the pilot run; null when the key lacks streams:read"),
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
  environment_class: z.enum(ENVIRONMENT_CLASSES as unknown as [EnvironmentClass, ...EnvironmentClass[]]),
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
