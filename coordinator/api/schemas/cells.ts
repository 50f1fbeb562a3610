/** Fleet operations (/v1/cells): enrolling cell agents, listing and revoking them. */
import { z } from "zod";
import { component, NullableTimestamp, Timestamp } from "./common.js";
import { REF_MAX_CHARS } from "../../json/field-bounds.js";

const CELL_ID = `cell_id must be 1..64 lowercase letters, digits, "-" or "_", starting with a letter or digit`;

/** POST /v1/cells body; `model` must also be a robot model of the catalog (checked by the route). */
export const EnrollCellRequest = component("EnrollCellRequest", z.strictObject({
  cell_id: z.string({ error: CELL_ID }).regex(/^[a-z0-9][a-z0-9_-]*$/, { error: CELL_ID }).max(64, { error: CELL_ID }),
  model: z.string({ error: "model must be a robot model of the catalog" }).max(REF_MAX_CHARS, { error: `model must be a robot model of the catalog (at most ${REF_MAX_CHARS} characters)` }).describe("a robot model id of GET /v1/robots"),
}, { error: `request body must be a JSON object {"cell_id": "...", "model": "..."}` }));

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
}));
