/** Run exports and calibration exports (docs/api.md, "Exports"). */
import { z } from "zod";
import { EXPORT_FORMATS } from "../../store/exports-repo.js";
import { EXPORT_STATUSES } from "../../exports/export-state.js";
import { component, NullableTimestamp, Timestamp } from "./common.js";

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
