/** Fleet operations (/v1/cells): enrolling cell agents, listing and revoking them. */
import { z } from "zod";
import { component, NullableTimestamp, Timestamp } from "./common.js";

const CELL_ID = `cell_id must be 1..64 lowercase letters, digits, "-" or "_", starting with a letter or digit`;

/** POST /v1/cells body; `model` must also be a robot model of the catalog (checked by the route). */
export const EnrollCellRequest = component("EnrollCellRequest", z.strictObject({
  cell_id: z.string({ error: CELL_ID }).regex(/^[a-z0-9][a-z0-9_-]*$/, { error: CELL_ID }).max(64, { error: CELL_ID }),
  model: z.string({ error: "model must be a robot model of the catalog" }).describe("a robot model id of GET /v1/robots"),
}, { error: `request body must be a JSON object {"cell_id": "...", "model": "..."}` }));

/** One instrument a cell reports, e.g. {kind: "camera", name: "top"} or {kind: "mocap", name: null}. */
const CellInstrument = z.strictObject({
  kind: z.string().describe("camera, joint_states, gripper_state, ft_wrist, mocap, estop, or a kind a later agent reports"),
  name: z.string().nullable(),
});

/** A cell as the coordinator sees it; never its token except `enrollment_token` on enrollment. */
export const Cell = component("Cell", z.strictObject({
  object: z.literal("cell"),
  id: z.string(),
  model: z.string(),
  enrollment_token: z.string().optional().describe("POST only; shown once"),
  created: Timestamp,
  revoked: NullableTimestamp,
  connected: z.boolean(),
  state: z.string().describe("idle, busy, estopped, held, firmware_mismatch when connected; offline or revoked otherwise"),
  firmware: z.string().nullable(),
  environment: z.string().nullable(),
  episode_id: z.string().nullable(),
  connected_at: NullableTimestamp,
  last_seen: NullableTimestamp,
  instruments: z.array(CellInstrument).nullable()
    .describe("instruments the cell configured and opened: live when connected, else as its last Hello reported them; null when it never connected"),
  instruments_down: z.array(CellInstrument)
    .describe("connected: instruments of `instruments` that stopped answering (the agent's latest heartbeat); empty otherwise"),
}));
