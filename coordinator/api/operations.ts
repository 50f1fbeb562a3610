/**
 * The /v1 route table: every operation the API answers, with its request and response schemas and
 * the error codes it can answer. It is the single source of the OpenAPI document (openapi.ts);
 * scopes are not repeated here: the generator reads them from coordinator/auth/route-scopes.ts,
 * the table `authorize` enforces. openapi.spec.ts checks both tables list the same routes and that
 * the express app answers exactly these.
 */
import { findRouteScope } from "../auth/route-scopes.js";
import type { z } from "zod";
import type { ErrorCode } from "../errors/codes.js";
import { Environment, EnvironmentListQuery, Robot, RobotListQuery, Suite } from "./schemas/catalog.js";
import { AbortEpisodeRequest, Cell, CellDetail, EnrollCellRequest, InterveneDoneRequest, InterveneRequest, InvalidatePreviousRequest, Invalidation, LabelEpisodeRequest, OperatorAnswer, SceneReadyRequest } from "./schemas/cells.js";
import { listOf } from "./schemas/common.js";
import { CreateCheckRequest, CreateGateRequest, Gate, GateCheck } from "./schemas/gates.js";
import { StreamDescriptor } from "./schemas/streams.js";
import { HeadlinePriorList } from "./schemas/statistics.js";
import { Comparison, ComparisonQuery } from "./schemas/comparisons.js";
import { CreateModelRequest, Model, ModelListQuery } from "./schemas/models.js";
import { Account, UpdateAccountRequest } from "./schemas/account.js";
import { Leaderboard, LeaderboardList } from "./schemas/leaderboards.js";
import { CalibrationExport, CalibrationExportRequest, Export, ExportRequest } from "./schemas/exports.js";
import { ApiKey, CreateKeyRequest, CurrentKey, SigningKey } from "./schemas/keys.js";
import { CreateKitRequest, Kit, KitTracking, ShippingLabel } from "./schemas/kits.js";
import { Budget, BudgetRequest, Quote, Usage, UsageQuery } from "./schemas/money.js";
import { RunBody, RunRequest } from "./schemas/run-request.js";
import { UpdateRunRequest } from "../runs/run-labels.js";
import {
  Checkpoint, CheckpointRequest, EpisodeListQuery, EpisodeOrArtifactList, EpisodeSeries, EpisodeSeriesQuery, ThumbnailQuery, PurgeReceipt, ReplayRequest, Report, ReportQuery, Result, Run, RunListQuery,
} from "./schemas/runs.js";
import { PAPER_FILE_NAMES, PAPER_MEDIA, PAPER_SELECTION_MAX, PaperSelectionQuery } from "./schemas/paper.js";
import { AmendTaskRequest, CreateTaskRequest, Pilot, PilotRequest, Task, TaskListQuery } from "./schemas/tasks.js";
import { CreateWebhookRequest, WebhookDelivery, WebhookEndpoint } from "./schemas/webhooks.js";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/** One success response: a JSON body (`schema`) and/or other content types. */
export interface SuccessResponse {
  status: number;
  description: string;
  schema?: z.ZodType;
  /** Non-JSON content: media type -> description (SSE, PDF). */
  other?: Record<string, string>;
}

export interface Operation {
  method: HttpMethod;
  /** OpenAPI path template, e.g. `/v1/runs/{run_id}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  description?: string;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** Whether the body may be absent (an operation that takes an optional body). */
  bodyOptional?: boolean;
  /** A body that is not JSON (a model's bytes): its media type and what it holds. */
  rawBody?: { type: string; description: string };
  responses: SuccessResponse[];
  /**
   * Codes beyond the ones every operation can answer (invalid_api_key, insufficient_scope,
   * rate_limited), not_found of a path with parameters, and contract_validation_failed of an
   * operation with a body or query.
   */
  errors?: ErrorCode[];
  /**
   * A code answered with a status other than its own (AssayError's `status`; docs/errors.md, "How requests
   * that no specific code covers are answered"), and when.
   */
  statusOverrides?: Array<{ status: number; code: ErrorCode; when: string }>;
}

/** What a run body can fail with before anything is stored (spec section 7), besides contract_validation_failed. */
const RUN_BODY_ERRORS: ErrorCode[] = [
  "contract_validation_failed", "firmware_pin_unavailable", "environment_unavailable", "task_unknown", "scenario_format_invalid",
  "episodes_invalid", "publish_forbidden", "not_found",
];
/** What admitting a submission adds (billing/submission.ts). */
const ADMISSION_ERRORS: ErrorCode[] = ["monthly_budget_exceeded", "budget_exceeded"];
/** The codes a run's stop can carry (GET /v1/runs/{run_id}/result answers them). */
const STOP_ERRORS: ErrorCode[] = [
  "budget_exceeded", "monthly_budget_exceeded", "estop_triggered", "queue_timeout", "policy_endpoint_timeout", "contract_validation_failed",
  "firmware_pin_unavailable", "environment_unavailable", "task_unknown", "retention_expired",
];

const json = (status: number, description: string, schema: z.ZodType): SuccessResponse => ({ status, description, schema });

export const OPERATIONS: readonly Operation[] = [
  // Catalogue
  { method: "GET", path: "/v1/robots", operationId: "listRobots", tag: "catalogue", summary: "List robots with installed firmwares, cells and live duty cycle",
    query: RobotListQuery, responses: [json(200, "robots", listOf(Robot))] },
  { method: "GET", path: "/v1/environments", operationId: "listEnvironments", tag: "catalogue", summary: "List versioned catalogue environments",
    query: EnvironmentListQuery, responses: [json(200, "environments", listOf(Environment))] },
  { method: "GET", path: "/v1/environments/{environment_id}", operationId: "getEnvironment", tag: "catalogue", summary: "One environment by <name>@<version> or <name> (newest)",
    responses: [json(200, "the environment", Environment)] },
  { method: "GET", path: "/v1/suites", operationId: "listSuites", tag: "catalogue", summary: "List frozen benchmark suites",
    responses: [json(200, "suites", listOf(Suite))] },
  { method: "GET", path: "/v1/suites/{suite_id}", operationId: "getSuite", tag: "catalogue", summary: "One suite by <name>@<version> or <name> (newest)",
    responses: [json(200, "the suite", Suite)] },
  { method: "GET", path: "/v1/statistics/priors", operationId: "listHeadlinePriors", tag: "catalogue",
    summary: "The headline's current priors per robot model and environment class (fitted from the fleet, or the default)",
    description: "Any key may read it: fitted priors only, no account's runs. A run records the priors in force when it is submitted; its results keep them.",
    responses: [json(200, "priors", HeadlinePriorList)] },

  // Runs
  { method: "POST", path: "/v1/runs", operationId: "createRun", tag: "runs", summary: "Submit a run",
    description: "Send Idempotency-Key: a retried submission with the same key and body returns the original run (200, Idempotent-Replayed: true).",
    body: RunRequest,
    responses: [json(201, "the run, queued", Run), json(200, "an Idempotency-Key replay: the original run", Run)],
    errors: [...RUN_BODY_ERRORS, ...ADMISSION_ERRORS, "quote_expired"] },
  { method: "GET", path: "/v1/runs", operationId: "listRuns", tag: "runs", summary: "List the account's runs, newest first",
    description: "Filters combine (every one given must match): kind, status, task, robot, policy_name and metadata[<key>]=<value> (Stripe's style; several keys allowed). Page with limit and starting_after.",
    query: RunListQuery, responses: [json(200, "runs", listOf(Run, { hasMore: true }))] },
  { method: "GET", path: "/v1/runs/{run_id}", operationId: "getRun", tag: "runs", summary: "A run with its resolved pins and, once completed, its result",
    responses: [json(200, "the run", Run)] },
  { method: "POST", path: "/v1/runs/{run_id}", operationId: "updateRun", tag: "runs", summary: "Change a run's name or metadata",
    description: "Stripe's update: metadata keys sent are set, a key sent as \"\" is removed, keys not sent are kept; name \"\" or null removes the name. Any status; what runs and the result do not change. Returns the Run.",
    body: UpdateRunRequest, bodyOptional: true, responses: [json(200, "the run, relabelled", Run)], errors: ["contract_validation_failed"] },
  { method: "POST", path: "/v1/runs/{run_id}/cancel", operationId: "cancelRun", tag: "runs", summary: "Cancel a queued or running run: it stops, its open episodes are cancelled, the episodes that ran keep their outcomes",
    description: "Returns 200 with the Run, stopped, status_detail {code: null, message}. Metering counts what ran. An ended run: 422.",
    responses: [json(200, "the run, stopped", Run)], errors: ["contract_validation_failed"] },
  { method: "POST", path: "/v1/runs/{run_id}/complete-without-recordings", operationId: "completeRunWithoutRecordings", tag: "runs",
    summary: "Stop waiting for recordings the run's cells have not uploaded: the run completes now, those files recorded missing",
    description: "Scope keys:admin (the run's account). For a running run whose episodes have all finished and that waits for recordings (its status_detail says which cell holds how many); the result is computed as usual, and a file uploaded later is still stored and served. Returns 200 with the Run, completed. Any other run: 422.",
    responses: [json(200, "the run, completed", Run)], errors: ["contract_validation_failed"] },
  { method: "GET", path: "/v1/runs/{run_id}/result", operationId: "getRunResult", tag: "runs", summary: "A completed run's Result",
    description: "A run that ended without completing answers its stop's error, with the partial Result in error.partial_result; an open run: 404.",
    responses: [json(200, "the Result", Result)], errors: STOP_ERRORS },
  { method: "GET", path: "/v1/runs/{run_id}/episodes", operationId: "listEpisodes", tag: "runs", summary: "A run's finished episodes, or with artifact=<kind> its artifact files",
    query: EpisodeListQuery, responses: [json(200, "episodes or artifacts", EpisodeOrArtifactList)] },
  { method: "GET", path: "/v1/runs/{run_id}/episodes/{episode_id}/series", operationId: "getEpisodeSeries", tag: "runs", summary: "An episode's joint positions and commanded targets over time, from its MCAP, downsampled",
    description: "At most max_points points per series, steps picked evenly over the episode. No stored recording yet, or an unknown episode: 404; a purged recording: 410; a recording that is not a readable MCAP: 422.",
    query: EpisodeSeriesQuery, responses: [json(200, "the series", EpisodeSeries)], errors: ["retention_expired"] },
  { method: "GET", path: "/v1/runs/{run_id}/episodes/{episode_id}/thumbnail", operationId: "getEpisodeThumbnail", tag: "runs", summary: "A JPEG still of one camera of an episode (its last frame by default), from its MCAP",
    description: "320 px wide at most; cached. A camera the recording lacks, no stored recording yet, or an unknown episode: 404; a purged recording: 410; a recording that is not a readable MCAP: 422.",
    query: ThumbnailQuery, responses: [{ status: 200, description: "the still", other: { "image/jpeg": "the camera's frame, scaled down" } }, { status: 304, description: "not modified: the ETag sent in If-None-Match is the still's" }], errors: ["retention_expired"] },
  { method: "GET", path: "/v1/runs/{run_id}/events", operationId: "streamRunEvents", tag: "runs", summary: "Server-sent events of a run",
    description: "Event `status` ({status, cell, webrtc}) on connect and on every transition; event `episode` ({episode, of, outcome, duration_s}) per finished episode (history first). The stream ends after a terminal status.",
    responses: [{ status: 200, description: "text/event-stream", other: { "text/event-stream": "events `status` and `episode` with JSON data" } }] },
  { method: "GET", path: "/v1/runs/{run_id}/report", operationId: "getRunReport", tag: "runs", summary: "The verification report of a completed run",
    query: ReportQuery,
    responses: [{ status: 200, description: "the Report (JSON), or with format=pdf the PDF", schema: Report, other: { "application/pdf": "the report as a PDF" } }] },
  { method: "GET", path: "/v1/comparisons", operationId: "compareRuns", tag: "runs", summary: "Two to six runs side by side: each side's rate with its interval and n, every pair's difference, a warning when pins differ",
    description: "runs=<id>,<id>[,...]: the account's runs or published ones (another account's unpublished run: 404). Sides: one per unit of a compare, transfer or matrix run, else the run's Result; at most 6. Unpaired statistics: the beta-binomial posterior difference of the model-level rates, simultaneous over the pairs (Bonferroni), Newcombe's interval about these cells beside it.",
    query: ComparisonQuery, responses: [json(200, "the comparison", Comparison)], errors: ["contract_validation_failed", "not_found"] },
  { method: "GET", path: "/v1/runs/{run_id}/paper/{file}", operationId: "getRunPaperFile", tag: "runs", summary: "A completed run's table, figure or citation for a paper",
    description: `file: ${PAPER_FILE_NAMES.join(", ")}. One row per unit (a compare's arms, a matrix's cells, a transfer's embodiments, an eval's robots; one row otherwise), each rate with n, successes and its 95% interval. Sent as an attachment (Content-Disposition) with the body's X-Content-SHA256. A run that has not completed, a pilot, or an unknown file: 404. docs/papers.md.`,
    responses: [{ status: 200, description: "the file", other: PAPER_MEDIA }] },
  { method: "GET", path: "/v1/paper/{file}", operationId: "getSelectionPaperFile", tag: "runs", summary: "A table, figure or citation of a selection of completed runs, one row per run",
    description: `file: ${PAPER_FILE_NAMES.join(", ")}. runs=<id>,<id> names 1 to ${PAPER_SELECTION_MAX} distinct runs of the account, rows in that order (each run's headline), with the body's X-Content-SHA256. A run of another account, not completed, or a pilot: 404. docs/papers.md.`,
    query: PaperSelectionQuery, responses: [{ status: 200, description: "the file", other: PAPER_MEDIA }] },
  { method: "POST", path: "/v1/runs/{run_id}/episodes/{episode_id}/replay", operationId: "replayEpisode", tag: "runs", summary: "A new run reproducing one finished episode",
    body: ReplayRequest, bodyOptional: true, responses: [json(201, "the new run", Run)], errors: [...RUN_BODY_ERRORS, ...ADMISSION_ERRORS] },
  { method: "POST", path: "/v1/runs/{run_id}/checkpoints", operationId: "pushCheckpoint", tag: "runs", summary: "Push a policy checkpoint to an iterating threshold run",
    body: CheckpointRequest, responses: [json(202, "the checkpoint, queued for the next episodes", Checkpoint)] },
  { method: "POST", path: "/v1/quote", operationId: "createQuote", tag: "money", summary: "Price a run body before it runs (both meters)",
    body: RunBody, responses: [json(200, "the quote", Quote)], errors: RUN_BODY_ERRORS },
  { method: "POST", path: "/v1/runs/{run_id}/export", operationId: "createExport", tag: "exports", summary: "Export a completed run as LeRobot v3.0, RLDS or an MCAP bundle",
    description: "Returns 202 with the Export in preparing; poll GET /v1/exports/{export_id}. The training formats leave out failed and intervened episodes unless the run's data.train_on_failures is true. A run that has not completed: 422; recordings purged or past retention: 410. The same request while the account's export of this run and format is preparing or ready: 200 with that export (nothing new is queued). An account with 4 exports (run and calibration) preparing: 429 rate_limited with Retry-After.",
    body: ExportRequest, responses: [json(202, "the export, preparing", Export), json(200, "the account's identical export, preparing or ready", Export)], errors: ["retention_expired"] },
  { method: "GET", path: "/v1/runs/{run_id}/exports", operationId: "listRunExports", tag: "exports", summary: "A run's exports, newest first",
    responses: [json(200, "exports", listOf(Export))] },
  { method: "GET", path: "/v1/exports/{export_id}", operationId: "getExport", tag: "exports", summary: "Poll an export: status, progress, file and expiry",
    responses: [json(200, "the export", Export)] },
  { method: "GET", path: "/v1/streams/{cell_id}", operationId: "getStream", tag: "streams", summary: "A cell's live stream descriptor: state, cameras as MJPEG, WebRTC signalling",
    description: "Operators see every cell; a customer sees a cell only while it runs the customer's work (otherwise 404, as for an unknown cell). URLs carry a 10-minute token.",
    responses: [json(200, "the stream descriptor", StreamDescriptor)] },
  // Leaderboards (public)
  { method: "GET", path: "/v1/leaderboards", operationId: "listLeaderboards", tag: "leaderboards", summary: "Every board with a published result (no key; rate-limited per address)",
    responses: [json(200, "boards, most recently updated first", LeaderboardList)] },
  { method: "GET", path: "/v1/leaderboards/{leaderboard_id}", operationId: "getLeaderboard", tag: "leaderboards", summary: "A board: entries by the lower end of their 95% interval, in tiers, and a Bradley-Terry fit of its paired compares (no key)",
    responses: [json(200, "the board", Leaderboard)] },
  { method: "GET", path: "/v1/leaderboards/{leaderboard_id}/entries/{run_id}/report", operationId: "getLeaderboardEntryReport", tag: "leaderboards", summary: "An entry's citable report, without its cost (no key)",
    query: ReportQuery, responses: [{ status: 200, description: "the report (JSON), or the PDF with format=pdf", other: { "application/json": "the report", "application/pdf": "the report as a PDF" } }] },
  // Account
  { method: "GET", path: "/v1/account", operationId: "getAccount", tag: "account", summary: "The account: its leaderboard opt-in and display name", responses: [json(200, "the account", Account)] },
  { method: "PUT", path: "/v1/account", operationId: "updateAccount", tag: "account", summary: "Opt in to (or out of) leaderboards, with the display name published results appear under",
    description: "Opting out hides the account's published entries from every board at once; the runs stay.", body: UpdateAccountRequest, responses: [json(200, "the account", Account)] },
  // Policy models
  { method: "POST", path: "/v1/models", operationId: "createModel", tag: "models", summary: "Declare a policy model upload (ONNX): name, size and sha256",
    description: "Returns 201 with the Model in uploading and its upload_url; PUT the bytes there. A checkpoint policy references a ready model by hf (name, name@revision or id).",
    body: CreateModelRequest, responses: [json(201, "the model, uploading", Model)] },
  { method: "PUT", path: "/v1/models/{model_id}/content", operationId: "uploadModelContent", tag: "models", summary: "Send a model's bytes, whole or as a Content-Range chunk",
    description: "Content-Type application/octet-stream. With Content-Range: bytes <first>-<last>/<total>, a chunk must start at received_bytes (at most 64 MiB); without it, the whole file. The last byte is hashed against sha256 and read as ONNX; the model is then ready, or the upload starts over (wrong hash) or fails (not a model).",
    rawBody: { type: "application/octet-stream", description: "the model's bytes, or the chunk its Content-Range names" },
    responses: [json(200, "the model: uploading with received_bytes, or ready", Model)], errors: ["contract_validation_failed"] },
  { method: "GET", path: "/v1/models", operationId: "listModels", tag: "models", summary: "The account's models, newest first",
    query: ModelListQuery, responses: [json(200, "models", listOf(Model, { hasMore: true }))] },
  { method: "GET", path: "/v1/models/{model_id}", operationId: "getModel", tag: "models", summary: "A model: status, received_bytes (to resume an upload), declared inputs and outputs",
    responses: [json(200, "the model", Model)] },
  { method: "DELETE", path: "/v1/models/{model_id}", operationId: "deleteModel", tag: "models", summary: "Delete a model's bytes (refused while an unfinished run uses it)",
    responses: [json(200, "the model, deleted", Model)], errors: ["contract_validation_failed"] },
  { method: "POST", path: "/v1/calibration/exports", operationId: "createCalibrationExport", tag: "exports", summary: "Export ground truth of completed runs for a simulator vendor, under a signed validation-only license",
    description: "Returns 202 with the CalibrationExport in preparing; poll GET /v1/calibration/exports/{calibration_export_id}. An unknown run: 404; a run not completed: 422; recordings purged or past retention: 410. The same request (runs, licensee, purpose, simulator) while the account's identical calibration export is preparing or ready: 200 with it. An account with 4 exports (run and calibration) preparing: 429 rate_limited with Retry-After.",
    body: CalibrationExportRequest, responses: [json(202, "the calibration export, preparing", CalibrationExport), json(200, "the account's identical calibration export, preparing or ready", CalibrationExport)], errors: ["not_found", "retention_expired"] },
  { method: "GET", path: "/v1/calibration/exports", operationId: "listCalibrationExports", tag: "exports", summary: "The account's calibration exports, newest first",
    responses: [json(200, "calibration exports", listOf(CalibrationExport))] },
  { method: "GET", path: "/v1/calibration/exports/{calibration_export_id}", operationId: "getCalibrationExport", tag: "exports", summary: "Poll a calibration export: status, license, signature, file and expiry",
    responses: [json(200, "the calibration export", CalibrationExport)] },
  { method: "DELETE", path: "/v1/data/{run_id}", operationId: "purgeRunData", tag: "runs", summary: "Delete every recording of an ended run",
    responses: [json(200, "the purge receipt", PurgeReceipt)], errors: ["contract_validation_failed"] },

  // Money
  { method: "GET", path: "/v1/usage", operationId: "getUsage", tag: "money", summary: "Metered usage in a UTC month",
    query: UsageQuery, responses: [json(200, "usage", Usage)] },
  { method: "PUT", path: "/v1/budgets", operationId: "putBudget", tag: "money", summary: "Set the account's monthly budget",
    body: BudgetRequest, responses: [json(200, "the budget", Budget)] },

  // Keys
  { method: "POST", path: "/v1/keys", operationId: "createKey", tag: "keys", summary: "Create an API key (the secret is shown once)",
    body: CreateKeyRequest, responses: [json(201, "the key with its secret", ApiKey)] },
  { method: "GET", path: "/v1/keys", operationId: "listKeys", tag: "keys", summary: "List the account's keys (never secrets)",
    responses: [json(200, "keys", listOf(ApiKey))] },
  { method: "GET", path: "/v1/keys/current", operationId: "getCurrentKey", tag: "keys", summary: "The calling key: its scopes, its account, and whether it is an operator's (any valid key)",
    responses: [json(200, "the key", CurrentKey)] },
  { method: "DELETE", path: "/v1/keys/{key_id}", operationId: "revokeKey", tag: "keys", summary: "Revoke a key (not the calling key)",
    responses: [json(200, "the revoked key", ApiKey)], errors: ["contract_validation_failed"] },
  { method: "GET", path: "/v1/signing-keys", operationId: "listSigningKeys", tag: "tasks", summary: "Public keys that sign frozen task specs",
    responses: [json(200, "signing keys", listOf(SigningKey))] },
  { method: "GET", path: "/v1/signing-keys/{key_id}", operationId: "getSigningKey", tag: "tasks", summary: "One public signing key",
    responses: [json(200, "the signing key", SigningKey)] },

  // Tasks
  { method: "POST", path: "/v1/tasks", operationId: "createTask", tag: "tasks", summary: "Create a Task Spec draft",
    body: CreateTaskRequest, responses: [json(201, "the task, draft", Task)] },
  { method: "GET", path: "/v1/tasks", operationId: "listTasks", tag: "tasks", summary: "Task Specs visible to the account",
    query: TaskListQuery, responses: [json(200, "tasks", listOf(Task, { hasMore: true }))], errors: ["not_found"] },
  { method: "GET", path: "/v1/tasks/{task_id}", operationId: "getTask", tag: "tasks", summary: "A task by id or frozen revision <name>@v<N>",
    responses: [json(200, "the task", Task)] },
  { method: "POST", path: "/v1/tasks/{task_id}/pilot", operationId: "pilotTask", tag: "tasks", summary: "Start a calibration run (draft -> piloting)",
    body: PilotRequest, bodyOptional: true, responses: [json(200, "the pilot", Pilot)],
    errors: ["firmware_pin_unavailable", "environment_unavailable", "episodes_invalid", "monthly_budget_exceeded"] },
  { method: "POST", path: "/v1/tasks/{task_id}/amend", operationId: "amendTask", tag: "tasks", summary: "Change creation fields (rejected once frozen)",
    body: AmendTaskRequest, bodyOptional: true, responses: [json(200, "the task", Task)] },
  { method: "POST", path: "/v1/tasks/{task_id}/freeze", operationId: "freezeTask", tag: "tasks", summary: "Freeze at the next revision; both parties sign",
    responses: [json(200, "the frozen task", Task)], errors: ["contract_validation_failed"] },
  { method: "POST", path: "/v1/tasks/{task_id}/revise", operationId: "reviseTask", tag: "tasks", summary: "A new draft from a frozen revision",
    responses: [json(201, "the new draft", Task)], errors: ["contract_validation_failed"] },

  // Kits
  { method: "POST", path: "/v1/kits", operationId: "createKit", tag: "kits", summary: "Register a customer object kit",
    body: CreateKitRequest, responses: [json(201, "the kit, registered", Kit)] },
  { method: "GET", path: "/v1/kits", operationId: "listKits", tag: "kits", summary: "The account's kits", responses: [json(200, "kits", listOf(Kit))] },
  { method: "GET", path: "/v1/kits/{kit_id}", operationId: "getKit", tag: "kits", summary: "A kit with its status history", responses: [json(200, "the kit", Kit)] },
  { method: "GET", path: "/v1/kits/{kit_id}/shipping-label", operationId: "getShippingLabel", tag: "kits", summary: "A fresh signed link to the kit's shipping label PDF",
    responses: [json(200, "the shipping label", ShippingLabel)] },
  { method: "POST", path: "/v1/kits/{kit_id}/receive", operationId: "receiveKit", tag: "kits", summary: "Technician: the hardware arrived (operator account)",
    responses: [json(200, "the kit", Kit)], errors: ["contract_validation_failed"] },
  { method: "POST", path: "/v1/kits/{kit_id}/track", operationId: "trackKit", tag: "kits", summary: "Technician: record mocap markers, mass and mesh scan (operator account)",
    body: KitTracking, responses: [json(200, "the kit", Kit)] },
  { method: "POST", path: "/v1/kits/{kit_id}/make-available", operationId: "makeKitAvailable", tag: "kits", summary: "Technician: make the kit referenceable as kit/<name> (operator account)",
    responses: [json(200, "the kit", Kit)], errors: ["contract_validation_failed"] },

  // Webhooks
  { method: "POST", path: "/v1/webhooks", operationId: "createWebhook", tag: "webhooks", summary: "Register a webhook endpoint (the signing secret is shown once)",
    body: CreateWebhookRequest, responses: [json(201, "the endpoint with its secret", WebhookEndpoint)] },
  { method: "GET", path: "/v1/webhooks", operationId: "listWebhooks", tag: "webhooks", summary: "The account's webhook endpoints",
    responses: [json(200, "endpoints", listOf(WebhookEndpoint))] },
  { method: "DELETE", path: "/v1/webhooks/{endpoint_id}", operationId: "deleteWebhook", tag: "webhooks", summary: "Remove an endpoint; its undelivered events are cancelled",
    responses: [json(200, "the removed endpoint", WebhookEndpoint)] },
  { method: "GET", path: "/v1/webhooks/{endpoint_id}/deliveries", operationId: "listWebhookDeliveries", tag: "webhooks", summary: "An endpoint's delivery log",
    responses: [json(200, "deliveries", listOf(WebhookDelivery))] },

  // Gates
  { method: "POST", path: "/v1/gates", operationId: "createGate", tag: "gates", summary: "Create a CI gate that runs a suite on matching refs",
    body: CreateGateRequest, responses: [json(201, "the gate", Gate)], errors: RUN_BODY_ERRORS },
  { method: "GET", path: "/v1/gates", operationId: "listGates", tag: "gates", summary: "The account's gates", responses: [json(200, "gates", listOf(Gate))] },
  { method: "GET", path: "/v1/gates/{gate_id}", operationId: "getGate", tag: "gates", summary: "A gate", responses: [json(200, "the gate", Gate)] },
  { method: "POST", path: "/v1/gates/{gate_id}/checks", operationId: "createGateCheck", tag: "gates", summary: "Start a check: an eval run of the gate's suite for one ref",
    body: CreateCheckRequest, responses: [json(201, "the check, pending", GateCheck)], errors: [...RUN_BODY_ERRORS, ...ADMISSION_ERRORS] },
  { method: "GET", path: "/v1/gates/{gate_id}/checks/{check_id}", operationId: "getGateCheck", tag: "gates", summary: "A check, as a CI job polls it",
    responses: [json(200, "the check", GateCheck)] },

  // Fleet
  { method: "POST", path: "/v1/cells", operationId: "enrollCell", tag: "fleet", summary: "Enroll a cell agent (operator account; the token is shown once)",
    body: EnrollCellRequest, responses: [json(201, "the cell with its enrollment token", Cell)] },
  { method: "GET", path: "/v1/cells", operationId: "listCells", tag: "fleet", summary: "The fleet as the coordinator sees it (operator account)",
    responses: [json(200, "cells", listOf(Cell))] },
  { method: "DELETE", path: "/v1/cells/{cell_id}", operationId: "revokeCell", tag: "fleet", summary: "Revoke a cell's token; an open link is cut (operator account)",
    responses: [json(200, "the revoked cell", Cell)] },
  { method: "GET", path: "/v1/cells/{cell_id}", operationId: "getCell", tag: "fleet", summary: "One cell, what it needs from a person, and its previous episode (operator account)",
    responses: [json(200, "the cell", CellDetail)] },
  { method: "POST", path: "/v1/cells/{cell_id}/scene-ready", operationId: "confirmCellScene", tag: "fleet", summary: "The scene the cell waits for is set: its reset goes on (operator station)",
    body: SceneReadyRequest, bodyOptional: true, responses: [json(200, "the answer sent to the cell", OperatorAnswer)] },
  { method: "POST", path: "/v1/cells/{cell_id}/abort", operationId: "abortCellEpisode", tag: "fleet", summary: "Abort the cell's current episode; it is scheduled again (operator station)",
    body: AbortEpisodeRequest, bodyOptional: true, responses: [json(200, "the answer sent to the cell", OperatorAnswer)] },
  { method: "POST", path: "/v1/cells/{cell_id}/label", operationId: "labelCellEpisode", tag: "fleet",
    summary: "A person's success label (yes/no, progress 0-100, note) for the episode the cell waits to have judged (operator station)",
    body: LabelEpisodeRequest, responses: [json(200, "the answer sent to the cell", OperatorAnswer)] },
  { method: "POST", path: "/v1/cells/{cell_id}/intervene", operationId: "interveneCellEpisode", tag: "fleet",
    summary: "A person is at the cell to help the episode that asked for an intervention: the arm stays held until intervene-done (operator station)",
    body: InterveneRequest, bodyOptional: true, responses: [json(200, "the answer sent to the cell", OperatorAnswer)],
    statusOverrides: [{ status: 409, code: "contract_validation_failed", when: "the cell asks no help now, a person already pressed Intervene, or episode_id is not the episode it asks help with" }] },
  { method: "POST", path: "/v1/cells/{cell_id}/intervene-done", operationId: "finishCellIntervention", tag: "fleet",
    summary: "The person has stepped back: the held episode goes on, flagged as intervened (operator station)",
    body: InterveneDoneRequest, bodyOptional: true, responses: [json(200, "the answer sent to the cell", OperatorAnswer)],
    statusOverrides: [{ status: 409, code: "contract_validation_failed", when: "the cell holds no episode for a person (nobody pressed Intervene), or episode_id is not the episode it holds" }] },
  { method: "POST", path: "/v1/cells/{cell_id}/invalidate-previous", operationId: "invalidatePreviousEpisode", tag: "fleet",
    summary: "Mark the cell's previous episode invalid: it runs again and never counts in n (operator station)",
    body: InvalidatePreviousRequest, responses: [json(200, "the invalidated episode", Invalidation)] },

  // The document itself
  { method: "GET", path: "/v1/openapi.json", operationId: "getOpenApiDocument", tag: "meta", summary: "This OpenAPI 3.1 document (public, no key)",
    description: "Readable without a key. A key that is sent must be valid: a wrong one is answered 401 invalid_api_key, not ignored.",
    errors: ["invalid_api_key"], responses: [{ status: 200, description: "the OpenAPI document", other: { "application/json": "OpenAPI 3.1 document" } }] },
];

/** Codes every operation can answer. */
export const COMMON_ERRORS: readonly ErrorCode[] = ["invalid_api_key", "insufficient_scope", "rate_limited"];

/** Every error code `op` can answer, in the table's order of codes. */
export function errorCodesOf(op: Operation): ErrorCode[] {
  // Public routes take no key: only the rate limit applies.
  const isPublic = findRouteScope(op.method, op.path.replace(/\{([^}]+)\}/g, "$1"))?.public === true;
  const codes = new Set<ErrorCode>(isPublic ? ["rate_limited"] : COMMON_ERRORS);
  if (op.path.includes("{")) codes.add("not_found");
  if (op.body || op.query) codes.add("contract_validation_failed");
  for (const code of op.errors ?? []) codes.add(code);
  return [...codes];
}
