/**
 * The request bodies of the task operations (POST /v1/tasks, /amend, /pilot), declared once with
 * zod: each is checked against its declaration first (`parseTaskBody`, `parseTaskAmendment`,
 * `parsePilotBody`), then coordinator/tasks/validate-task.ts and pilot.ts check what a schema cannot
 * know (the class's stocked objects and presets, kits, predicates binding to instruments, pins).
 * The OpenAPI document (coordinator/api/schemas/tasks.ts) publishes the same declarations.
 */
import { z } from "zod";
import { ENVIRONMENT_CLASSES, type EnvironmentClass } from "../catalog/environments.js";
import { parseWith } from "../json/zod-errors.js";
import { component } from "../json/schema-components.js";
import {
  boundedRecord, CHANNELS_MAX, INSTRUCTION_MAX_CHARS, INSTRUCTIONS_MAX, NAME_MAX_CHARS, PREDICATE_MAX_CHARS, REF_MAX_CHARS, TASK_ENTRIES_MAX, TEXT_MAX_CHARS,
  tooLong, tooMany,
} from "../json/field-bounds.js";
import { InstructionSet, Judge, Policy } from "../runs/run-schemas.js";

export const PILOT_EPISODES_DEFAULT = 10;
export const PILOT_EPISODES_MAX = 50;

const NAME = 'is required: 1..64 characters of a-z, 0-9 and single hyphens, e.g. "pick-cube"';
const INITIAL_CONDITIONS = "a non-empty object {<name>: {object, pose: [x_m, y_m, z_m, yaw_deg], tol_mm, randomize: {x_mm, y_mm, yaw_deg}}}";

/** A non-empty string of at most `max` characters (instructions, presets, out-of-scope lines). */
const text = (max: number) => z.string({ error: "must be a non-empty string" }).trim().min(1, { error: "must be a non-empty string" }).max(max, tooLong(max));

/** A list of at most `max` such strings. */
const texts = (maxChars: number, maxItems: number) => z.array(text(maxChars)).max(maxItems, tooMany(maxItems));

const PILOT_EPISODES_ERROR = `must be an integer from 1 to ${PILOT_EPISODES_MAX} (default ${PILOT_EPISODES_DEFAULT})`;

/** One object of `initial_conditions`. */
export const InitialCondition = z.strictObject({
  object: z.string().max(REF_MAX_CHARS, tooLong(REF_MAX_CHARS)).describe("an object the environment stocks, or kit/<name> of an available kit"),
  // Four numbers; checked with its own message in validate-task.ts, which names the whole pose.
  pose: z.array(z.unknown()).max(4, { error: "must be [x_m, y_m, z_m, yaw_deg]: four numbers" }).describe("[x_m, y_m, z_m, yaw_deg]: four numbers"),
  tol_mm: z.number({ error: "must be a positive number of millimetres" }).positive({ error: "must be a positive number of millimetres" }).optional(),
  randomize: z.strictObject({
    x_mm: z.number({ error: "must be a number >= 0 (a half-range)" }).min(0, { error: "must be a number >= 0 (a half-range)" }).optional(),
    y_mm: z.number({ error: "must be a number >= 0 (a half-range)" }).min(0, { error: "must be a number >= 0 (a half-range)" }).optional(),
    yaw_deg: z.number({ error: "must be a number >= 0 (a half-range)" }).min(0, { error: "must be a number >= 0 (a half-range)" }).optional(),
  }).optional(),
});

/** `{<name>: <predicate expression>}`: a success predicate or a stage. */
export const Predicate = boundedRecord(z.string().max(PREDICATE_MAX_CHARS, tooLong(PREDICATE_MAX_CHARS)), { maxEntries: TASK_ENTRIES_MAX }).describe("one predicate name to its expression; it must bind to an instrument of the environment class");

const taskFields = {
  name: z.string({ error: NAME }).regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, { error: NAME }).max(64, { error: NAME }).describe("1..64 characters of a-z, 0-9 and single hyphens"),
  visibility: z.enum(["private", "published"]).optional().describe("default private"),
  environment_class: z.enum(ENVIRONMENT_CLASSES as unknown as [EnvironmentClass, ...EnvironmentClass[]]).optional().describe("Assay's addition: the class predicates bind against; default standard"),
  initial_conditions: boundedRecord(InitialCondition, { maxEntries: TASK_ENTRIES_MAX }, { error: (issue) => (issue.input === undefined ? `is required: ${INITIAL_CONDITIONS}` : `must be ${INITIAL_CONDITIONS}`) })
    .refine((value) => Object.keys(value).length > 0, { error: `must be ${INITIAL_CONDITIONS}` }),
  success_predicates: z.array(Predicate, { error: (issue) => (issue.input === undefined ? "is required: a non-empty array of {<name>: <predicate>}" : "must be a non-empty array of {<name>: <predicate>}") })
    .min(1, { error: "must be a non-empty array of {<name>: <predicate>}" }).max(TASK_ENTRIES_MAX, tooMany(TASK_ENTRIES_MAX)),
  instructions: z.strictObject({
    sampled_per_episode: texts(INSTRUCTION_MAX_CHARS, INSTRUCTIONS_MAX).optional(), held_out: texts(INSTRUCTION_MAX_CHARS, INSTRUCTIONS_MAX).optional(),
  }).nullable().optional(),
  stages: z.array(Predicate).max(TASK_ENTRIES_MAX, tooMany(TASK_ENTRIES_MAX)).optional(),
  envelope: z.strictObject({
    lighting: texts(NAME_MAX_CHARS, CHANNELS_MAX).optional(), distractors: z.string().max(NAME_MAX_CHARS, tooLong(NAME_MAX_CHARS)).optional(),
    out_of_scope: texts(TEXT_MAX_CHARS, TASK_ENTRIES_MAX).optional(),
  }).nullable().optional(),
  baseline: z.strictObject({
    internal_trials: z.number({ error: "must be a positive integer" }).int({ error: "must be a positive integer" }).positive({ error: "must be a positive integer" }),
    internal_rate: z.number({ error: "must be a number from 0 to 1" }).min(0, { error: "must be a number from 0 to 1" }).max(1, { error: "must be a number from 0 to 1" }),
  }).nullable().optional()
    .describe("the customer's internal trials; never published"),
};

/** POST /v1/tasks body. */
export const CreateTaskRequest = component("CreateTaskRequest", z.strictObject(taskFields));

/** POST /v1/tasks/{task_id}/amend body: any subset of the creation fields. */
export const AmendTaskRequest = component("AmendTaskRequest", z.strictObject(taskFields).partial());

/** POST /v1/tasks/{task_id}/pilot body (coordinator/tasks/pilot.ts). */
export const PilotRequest = component("PilotRequest", z.strictObject({
  robot: z.string({ error: 'is required as "<model>@<firmware>" or "<model>@latest"' }).max(REF_MAX_CHARS, tooLong(REF_MAX_CHARS)).describe("<model>@<firmware> or <model>@latest"),
  episodes: z.number({ error: PILOT_EPISODES_ERROR }).int({ error: PILOT_EPISODES_ERROR }).min(1, { error: PILOT_EPISODES_ERROR })
    .max(PILOT_EPISODES_MAX, { error: PILOT_EPISODES_ERROR }).optional().describe(`default ${PILOT_EPISODES_DEFAULT}`),
  policy: Policy.optional().describe("default: the reference expert policy"),
  environment: z.string().max(REF_MAX_CHARS, tooLong(REF_MAX_CHARS)).optional().describe("default: the first environment of the task's class with the robot installed"),
  instructions: InstructionSet.optional().describe("only sampled: a pilot iterates, and held-out paraphrases are never sampled while iterating"),
  judge: Judge.optional().describe("a success classifier for the task's operator.success predicate (docs/judges.md), as on a run"),
}));

/** A POST /v1/tasks body, checked against its declaration (422 contract_validation_failed naming the field). */
export function parseTaskBody(body: unknown): Record<string, unknown> {
  return parseWith(CreateTaskRequest, body) as Record<string, unknown>;
}

/** A POST /v1/tasks/{task_id}/amend body: any subset of the creation fields. */
export function parseTaskAmendment(body: unknown): Record<string, unknown> {
  return parseWith(AmendTaskRequest, body) as Record<string, unknown>;
}

/** A POST /v1/tasks/{task_id}/pilot body (absent: `{}`); a missing robot is firmware_pin_unavailable. */
export function parsePilotBody(body: unknown): z.output<typeof PilotRequest> {
  return parseWith(PilotRequest, body === undefined ? {} : body, {
    codeOfField: { robot: "firmware_pin_unavailable", episodes: "episodes_invalid", environment: "environment_unavailable" },
    missing: (field) => ({
      code: field === "robot" ? "firmware_pin_unavailable" : "contract_validation_failed",
      message: field === "robot" ? `robot is required as "<model>@<firmware>" or "<model>@latest"; got undefined` : `${field} is required`,
    }),
  });
}
