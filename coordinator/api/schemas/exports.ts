/** Run exports and calibration exports (docs/api.md, "Exports"). */
import { z } from "zod";
import { EXPORT_FORMATS } from "../../store/exports-repo.js";
import { EXPORT_STATUSES } from "../../domain/export-state.js";
import { component, NullableTimestamp, Timestamp } from "./common.js";
import { REF_MAX_CHARS } from "../../json/field-bounds.js";

const formatMessage = `format must be one of ${EXPORT_FORMATS.join(", ")}`;

/** Body of POST /v1/runs/{run_id}/export. */
export const ExportRequest = z.strictObject({
  format: z.enum(EXPORT_FORMATS, { error: formatMessage }).describe("lerobot (LeRobot dataset v3.0), rlds (TensorFlow Datasets RLDS), mcap-bundle (every episode's MCAP and video with a manifest and the report)"),
});

const ArchiveFile = z.strictObject({
  name: z.string(),
  bytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  content_type: z.string(),
}).describe("the archive, once ready");

const ArchiveFailure = z.strictObject({
  reason: z.string().nullable().describe("failed: export_error, attempts_exhausted; expired: purged, retention, availability"),
  message: z.string().nullable(),
}).nullable().describe("why it failed or expired; null otherwise");

export const Export = component("Export", z.strictObject({
  object: z.literal("export"),
  id: z.string(),
  run_id: z.string(),
  format: z.enum(EXPORT_FORMATS),
  status: z.enum(EXPORT_STATUSES).describe("preparing on creation; then ready, failed or expired"),
  download_url: z.url().nullable().describe("null until ready and after it expires; GET it with the same bearer key (Range requests supported)"),
  created: Timestamp,
  progress: z.strictObject({
    episodes_done: z.number().int().min(0),
    episodes_total: z.number().int().min(0),
  }),
  episodes: z.strictObject({
    included: z.number().int().min(0),
    excluded: z.record(z.string(), z.number().int().min(0)).describe("reason -> episodes left out: failure, intervened (training formats without data.train_on_failures), recording_unavailable"),
    train_on_failures: z.boolean(),
  }),
  file: ArchiveFile.nullable(),
  ready_at: NullableTimestamp,
  expires_at: NullableTimestamp.describe("the download is available until then: 7 days after ready, never past the run's data.retention"),
  failure: ArchiveFailure,
}).describe("A run export: an archive prepared off the request path (docs/api.md, Exports)."));

/** Most runs one calibration export may hold. */
export const CALIBRATION_RUNS_MAX = 20;

const runsMessage = `runs must be a list of 1..${CALIBRATION_RUNS_MAX} distinct run ids of this account`;

/** Body of POST /v1/calibration/exports. */
export const CalibrationExportRequest = z.strictObject({
  runs: z.array(z.string({ error: runsMessage }).min(1, { error: runsMessage }).max(REF_MAX_CHARS, { error: runsMessage }), { error: runsMessage })
    .min(1, { error: runsMessage }).max(CALIBRATION_RUNS_MAX, { error: runsMessage })
    .refine((ids) => new Set(ids).size === ids.length, { error: `${runsMessage}; a run is named twice` })
    .describe("completed runs whose episodes to ship; typically verify runs with return_ground_truth"),
  licensee: z.strictObject({
    name: z.string({ error: "licensee.name must be the licensee's legal name" }).trim().min(1, { error: "licensee.name must be the licensee's legal name" }).max(200),
    contact: z.email({ error: "licensee.contact must be an email address" }).max(254, { error: "licensee.contact must be an email address of at most 254 characters" }),
  }, { error: "licensee must be {name, contact}: the organisation the data is licensed to and an email address" }),
  purpose: z.string({ error: "purpose must say what the data will validate (10..500 characters)" }).trim()
    .min(10, { error: "purpose must say what the data will validate (10..500 characters)" }).max(500, { error: "purpose must say what the data will validate (10..500 characters)" }),
  simulator: z.string().trim().min(1).max(200).optional().describe("the simulator to be validated, named in the license"),
});

export const CalibrationExport = component("CalibrationExport", z.strictObject({
  object: z.literal("calibration_export"),
  id: z.string(),
  status: z.enum(EXPORT_STATUSES),
  created: Timestamp,
  runs: z.array(z.string()),
  license: z.strictObject({
    id: z.string(),
    licensor: z.string(),
    licensee: z.strictObject({ name: z.string(), contact: z.string() }),
    purpose: z.string(),
    simulator: z.string().nullable(),
    runs: z.array(z.string()),
    use: z.literal("validation only"),
    granted: Timestamp,
    expires: Timestamp,
    text: z.string(),
  }).describe("the license terms as signed (license.json in the archive)"),
  episodes: z.number().int().min(0).nullable().describe("episodes shipped, once ready"),
  download_url: z.url().nullable(),
  file: ArchiveFile.nullable(),
  signature: z.string().nullable().describe("ed25519:<key_id>:<base64url> over the exact bytes of license.json; the key is at signing_key_url"),
  signing_key_url: z.url().nullable(),
  ready_at: NullableTimestamp,
  expires_at: NullableTimestamp.describe("the download is available until then (7 days after ready, never past the runs' data.retention); the license runs a year"),
  failure: ArchiveFailure,
}).describe("Ground-truth calibration data for a simulator vendor under a validation-only license (docs/api.md, Calibration exports)."));
