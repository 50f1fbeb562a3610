/** Fleet operations (/v1/cells): enrolling cell agents, listing and revoking them, and the operator station's answers. */
import { z } from "zod";
import { INVALID_REASONS } from "../../domain/invalid-reasons.js";
import { component, NullableTimestamp, Timestamp } from "./common.js";
import { REF_MAX_CHARS } from "../../json/field-bounds.js";

const CELL_ID = `cell_id must be 1..64 lowercase letters, digits, "-" or "_", starting with a letter or digit`;

/** POST /v1/cells body; `model` must also be a robot model of the catalog (checked by the route). */
export const EnrollCellRequest = component("EnrollCellRequest", z.strictObject({
  cell_id: z.string({ error: CELL_ID }).regex(/^[a-z0-9][a-z0-9_-]*$/, { error: CELL_ID }).max(64, { error: CELL_ID }),
  model: z.string({ error: "model must be a robot model of the catalog" }).max(REF_MAX_CHARS, { error: `model must be a robot model of the catalog (at most ${REF_MAX_CHARS} characters)` }).describe("a robot model id of GET /v1/robots"),
}, { error: `request body must be a JSON object {"cell_id": "...", "model": "..."}` }));

/** One instrument a cell reports, e.g. {kind: "camera", name: "top"} or {kind: "mocap", name: null}. */
const CellInstrument = z.strictObject({
  kind: z.string().describe("camera, joint_states, gripper_state, ft_wrist, mocap, estop, or a kind a later agent reports"),
  name: z.string().nullable(),
});


/** What a cell needs from a person now (the operator station). */
export const CellAttention = component("CellAttention", z.strictObject({
  kind: z.enum(["reset", "label", "intervene"]).describe(
    "reset: set the scene, then POST /v1/cells/{cell_id}/scene-ready; label: judge the finished episode, then POST /v1/cells/{cell_id}/label; " +
      "intervene: the episode is paused for a person's help (scene.phase offered: POST /v1/cells/{cell_id}/intervene when at the cell; holding: help, then POST /v1/cells/{cell_id}/intervene-done)",
  ),
  episode_id: z.string().describe("the episode waiting on the person"),
  run_id: z.string().nullable(),
  index: z.number().int().min(0).nullable().describe("the episode's 0-based index in its run"),
  since: Timestamp.describe("when the cell started waiting"),
  waiting_s: z.number().min(0).describe("seconds the cell has waited so far"),
  scene: z.record(z.string(), z.unknown()).describe(
    "the scene to set, as the cell sent it: lighting, objects {name: {object, position_m [x, y, z], yaw_rad, tolerance_m?}} in the cell's " +
      "world frame, distractors [{object, position_m, yaw_rad}], and cameras {name: calibration} for cameras fixed in the world frame. " +
      "label: {instruction, predicates, review?} where review (audit, low_confidence, judge_failed) says why a person judges an episode the run's judge also saw (never the judge's verdict). " +
      "intervene: {intervention (on_stall or scripted), phase (offered or holding), what, steps [...], t_s (episode seconds), held_since?}",
  ),
}));

/** A cell as the coordinator sees it; never its token except `enrollment_token` on enrollment. */
export const Cell = component("Cell", z.strictObject({
  object: z.literal("cell"),
  id: z.string(),
  model: z.string(),
  enrollment_token: z.string().optional().describe("POST only; shown once"),
  created: Timestamp,
  revoked: NullableTimestamp,
  connected: z.boolean(),
  state: z.string().describe("idle, busy, awaiting_reset, awaiting_label, intervening, estopped, held, firmware_mismatch when connected; offline or revoked otherwise"),
  firmware: z.string().nullable(),
  environment: z.string().nullable(),
  episode_id: z.string().nullable(),
  connected_at: NullableTimestamp,
  last_seen: NullableTimestamp,
  instruments: z.array(CellInstrument).nullable()
    .describe("instruments the cell configured and opened: live when connected, else as its last Hello reported them; null when it never connected"),
  instruments_down: z.array(CellInstrument)
    .describe("connected: instruments of `instruments` that stopped answering (the agent's latest heartbeat); empty otherwise"),
  attention: CellAttention.nullable().describe("what the cell needs from a person now; null when nothing"),
  recordings_not_uploaded: z.strictObject({
    artifacts: z.number().int().min(1).describe("recordings (MCAPs, videos) the cell announced and has not uploaded, over every run"),
    since: NullableTimestamp.describe("when the oldest of their episodes finished"),
  }).optional().describe("(added) GET only, while the cell holds recordings it has not uploaded (runs wait for them; docs/storage.md)"),
}));

/** GET /v1/cells/{cell_id}: the cell, and the episode the station's "mark previous invalid" would name. */
export const CellDetail = component("CellDetail", Cell.extend({
  previous_episode: z.strictObject({
    id: z.string(), run_id: z.string(), index: z.number().int().min(0), attempt: z.number().int().min(0),
    outcome: z.enum(["success", "failure"]).nullable(), finished_at: NullableTimestamp,
    run_open: z.boolean().describe("whether its run still runs: only then can the episode be marked invalid"),
  }).nullable().describe("the episode this cell finished last; null when none"),
}));

const EPISODE_ID = z.string({ error: "episode_id must be the id of the episode the station shows" }).min(1).max(100);

/** POST /v1/cells/{cell_id}/scene-ready body (optional): the episode whose scene is confirmed, to guard against a stale screen. */
export const SceneReadyRequest = component("SceneReadyRequest", z.strictObject({
  episode_id: EPISODE_ID.optional(),
}, { error: `request body must be a JSON object {"episode_id"?: "..."}` }));

/** POST /v1/cells/{cell_id}/abort body (optional). */
export const AbortEpisodeRequest = component("AbortEpisodeRequest", z.strictObject({
  episode_id: EPISODE_ID.optional(),
  note: z.string({ error: "note must be a string of at most 500 characters" }).max(500, { error: "note must be a string of at most 500 characters" }).optional(),
}, { error: `request body must be a JSON object {"episode_id"?: "...", "note"?: "..."}` }));

/** POST /v1/cells/{cell_id}/label body: a person's judgement of the episode the cell waits to have labelled. */
export const LabelEpisodeRequest = component("LabelEpisodeRequest", z.strictObject({
  success: z.boolean({ error: "success must be true or false" }).describe("did the episode succeed, in the person's judgement (operator.success)"),
  progress: z.number({ error: "progress must be a number from 0 to 100" }).min(0, { error: "progress must be a number from 0 to 100" }).max(100, { error: "progress must be a number from 0 to 100" }).optional()
    .describe("how far the robot got, 0-100 (reported as a mean with its 95% interval)"),
  note: z.string({ error: "note must be a string of at most 500 characters" }).max(500, { error: "note must be a string of at most 500 characters" }).optional(),
  episode_id: EPISODE_ID.optional().describe("the episode the station shows; refused when the cell waits for another"),
}, { error: `request body must be a JSON object {"success": true | false, "progress"?: 0-100, "note"?: "...", "episode_id"?: "..."}` }));

/** POST /v1/cells/{cell_id}/intervene body (optional). */
export const InterveneRequest = component("InterveneRequest", z.strictObject({
  episode_id: EPISODE_ID.optional().describe("the episode the station shows; refused when the cell asks help for another"),
}, { error: `request body must be a JSON object {"episode_id"?: "..."}` }));

/** POST /v1/cells/{cell_id}/intervene-done body (optional): what the person did, for the episode's record. */
export const InterveneDoneRequest = component("InterveneDoneRequest", z.strictObject({
  episode_id: EPISODE_ID.optional().describe("the episode the station shows; refused when the cell holds another"),
  note: z.string({ error: "note must be a string of at most 500 characters" }).max(500, { error: "note must be a string of at most 500 characters" }).optional()
    .describe("what the person did (recorded in the intervention's detail)"),
}, { error: `request body must be a JSON object {"episode_id"?: "...", "note"?: "..."}` }));

const REASONS = `reason must be one of "scene_wrong", "hardware_fault", "person_in_cell"`;

/** POST /v1/cells/{cell_id}/invalidate-previous body. */
export const InvalidatePreviousRequest = component("InvalidatePreviousRequest", z.strictObject({
  reason: z.enum(INVALID_REASONS, { error: REASONS }),
  note: z.string({ error: "note must be a string of at most 500 characters" }).max(500, { error: "note must be a string of at most 500 characters" }).optional(),
  episode_id: EPISODE_ID.optional().describe("the episode the station shows as previous; refused when the cell's previous episode is another"),
}, { error: `request body must be a JSON object {"reason": "scene_wrong" | "hardware_fault" | "person_in_cell", "note"?: "...", "episode_id"?: "..."}` }));

/** The answer to scene-ready, abort, label, intervene and intervene-done. */
export const OperatorAnswer = component("OperatorAnswer", z.strictObject({
  object: z.literal("operator_answer"),
  cell_id: z.string(),
  episode_id: z.string(),
  action: z.enum(["scene_ready", "abort", "label", "intervene", "intervene_done"]),
}));

/** The answer to invalidate-previous. */
export const Invalidation = component("Invalidation", z.strictObject({
  object: z.literal("invalidation"),
  cell_id: z.string(),
  episode_id: z.string(),
  run_id: z.string(),
  index: z.number().int().min(0),
  attempt: z.number().int().min(0).describe("the attempt marked invalid; the episode runs again as the next attempt"),
  reason: z.enum(INVALID_REASONS),
  note: z.string().nullable(),
  outcome: z.enum(["success", "failure"]).nullable().describe("the outcome the invalid attempt had (never counted)"),
}));
