/**
 * The HTTP API's one options object. `compileApiDeps` fills defaults, validates, and rejects
 * unknown keys, so a wiring mistake fails at start-up rather than on the first request.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Registry } from "prom-client";
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import { loadEnvironments, type CatalogEnvironment } from "../catalog/environments.js";
import type { FleetView } from "../cells/fleet-view.js";
import { QUOTE_VALIDITY_MS } from "../billing/quotes.js";
import { rejectedKeysByAddress, validateRateLimits, type RateLimits } from "./rate-limit.js";
import { NO_TRUSTED_PROXIES, type TrustedProxies } from "./client-address.js";
import type { RejectedKeyLimit } from "../auth/authenticate.js";
import { DEFAULT_EXPORTS_QUEUED_PER_ACCOUNT } from "../exports/export-admission.js";
import { createRunBackfill, type RunBackfill } from "../runs/run-backfill.js";
import type { RunEvents } from "../runs/run-events.js";
import type { CellStreamHub } from "../streams/cell-stream-hub.js";
import type { ObjectStore } from "../storage/object-store.js";
import type { Db } from "../store/database.js";
import { DEFAULT_MODEL_LIMITS, type ModelLimits } from "../models/model-limits.js";
import type { LiveForwarding } from "../streams/live-forwarding.js";
import { inProcessPdfRenderer, type PdfRenderer } from "./pdf-renderer.js";
import { ConnectionCaps } from "../streams/connection-caps.js";
import { EpisodeThumbnails } from "../artifacts/episode-thumbnail.js";
import { createLiveAccessWatch, type LiveAccess } from "../streams/live-access-watch.js";
import type { OperatorStation } from "../fleet/operator-station.js";
import { AssayError } from "../errors/assay-error.js";
import { ApiKeyCache } from "../auth/api-key-cache.js";

export interface ApiUrls {
  /** Public base of /v1, e.g. https://api.assay.example (no trailing slash). */
  baseUrl: string;
  /** Public base of artifact files; must reach this app's /artifacts, e.g. `${baseUrl}/artifacts`. */
  artifactUrl: string;
  /** Public base of live streams; a cell's stream is `${streamsUrl}/cells/<cell>`. */
  streamsUrl: string;
  /** Public base of the docs; error doc_url is `${docsUrl}/errors#<code>`, e.g. `${baseUrl}/docs`. */
  docsUrl: string;
}

export interface ApiDeps {
  db: Db;
  fleet: FleetView;
  runEvents: RunEvents;
  /**
   * Woken after a run is inserted so it can match the run to cells without waiting for a tick; its
   * `waitingReason` (optional) says why an open run's episodes wait, shown as its status_detail.
   */
  scheduler: { kick(): void; waitingReason?(runId: string): string | undefined };
  /** Runs waiting for recordings their cells have not uploaded (fleet/recording-waits.ts): `reason` is shown as the run's status_detail. Default none. */
  recordingWaits?: { reason(runId: string): string | undefined };
  pins: FirmwarePins;
  urls: ApiUrls;
  /** The artifact store (coordinator/storage/): episode files at `<run_id>/<episode_id>/<file_name>`, exports, models. */
  objects: ObjectStore;
  /** Registry served at /metrics (create it with createMetricsRegistry()). */
  metrics: Registry;
  /** Injectable clock for timestamps. Default: () => new Date(). */
  clock?: () => Date;
  /** Environment catalogue. Default: coordinator/catalog/environments.json. */
  environments?: readonly CatalogEnvironment[];
  /** SSE heartbeat comment period. Default 15000 ms. */
  sseHeartbeatMs?: number;
  /** How long an event stream may go without an event before it is closed. Default 15 min. */
  sseIdleMs?: number;
  /**
   * Caps on open event streams, MJPEG viewers and signalling WebSockets per key and per account
   * (coordinator/streams/connection-caps.ts). Default: a fresh ConnectionCaps with the default caps (10 per key, 30 per account, each kind).
   */
  connectionCaps?: ConnectionCaps;
  /** Episode thumbnails from the recordings, cached and bounded (coordinator/artifacts/episode-thumbnail.ts). Default: a fresh EpisodeThumbnails with its defaults. */
  thumbnails?: EpisodeThumbnails;
  /**
   * Re-checks open live views for as long as they are open (coordinator/streams/live-access-watch.ts).
   * Default: a watch over `db`, `fleet` and `runEvents` with the backstop re-check only.
   */
  liveAccess?: LiveAccess;
  /** Folder holding errors.md and api.md, served at /docs. Default: the repo's docs/. */
  docsDir?: string;
  /** Where unexpected errors are logged. Default: console.error. */
  log?: (message: string, error: unknown) => void;
  /** Halts an account's open runs once its hard monthly budget is reached (after PUT /v1/budgets). Default: does nothing. */
  budgetGuard?: { checkAccount(accountId: string): Promise<number> };
  /**
   * Per-key token buckets, or "off". Default "off" here; the coordinator passes its options'
   * limits, which default to DEFAULT_RATE_LIMITS (20/s burst 40; POST /v1/runs 5/s burst 10).
   */
  rateLimits?: RateLimits | "off";
  /** How long a quote may back a submission. Default 15 min. */
  quoteValidityMs?: number;
  /**
   * The archive worker that makes run and calibration exports, kicked after a request. Default: no
   * kick (the worker still finds the request on its next sweep).
   */
  archives?: { kick(): void };
  /** Live camera frames and state of the cells (coordinator/streams/live-hub.ts). Default: no cameras. */
  live?: LiveView;
  /** STUN/TURN servers offered to WebRTC viewers. Default none (host candidates: enough on one network). */
  iceServers?: IceServer[];
  /** Ends a run (POST /v1/runs/{id}/cancel stops it with no error code); false when it had already ended. Default: refuses. */
  endRun?: (runId: string, ending: { status: "stopped"; message: string }) => Promise<boolean>;
  /**
   * Completes a running run whose episodes have all finished without the recordings its cells have not uploaded
   * (lifecycle `completeWithoutRecordings`); `by` is logged. Default: completes nothing (no fleet).
   */
  completeWithoutRecordings?: (runId: string, by: string) => Promise<boolean>;
  /**
   * Who may read /metrics: "open" (anyone who reaches the port; fine on loopback) or "operator" (a
   * bearer key of the operator account). Default "open"; the coordinator says "operator" whenever
   * it listens beyond loopback.
   */
  metricsAccess?: "open" | "operator";
  /** Accept webhook receivers on loopback (coordinator option webhooksAllowLoopback). Default false. */
  webhooksAllowLoopback?: boolean;
  /** Bounds of model uploads (coordinator/models/model-limits.ts). Default DEFAULT_MODEL_LIMITS (2 GiB a file, 64 MiB chunks, 20 GiB an account, 4 uploads in progress). */
  models?: ModelLimits;
  /** The operator's local model mirror (coordinator/models/model-mirror.ts). Default null: none. */
  modelMirror?: string | null;
  /** Endpoint pre-flight at submission: how long to wait for the endpoint, or "off". Default 30 s. */
  preflight?: { timeoutMs: number } | "off";
  /** Archives (run and calibration exports) one account may have preparing at once. Default DEFAULT_EXPORTS_QUEUED_PER_ACCOUNT (4). */
  exportsQueuedPerAccount?: number;
  /** Loop turns for heavy submission steps and large runs' remaining episodes (server.ts shares it with the start-up resume). Default: one of its own. */
  backfill?: RunBackfill;
  /** Live views of cells held by other coordinators on the database (coordinator/cluster/). Default none: one coordinator. */
  liveForwarding?: LiveForwarding;
  /** Proxies whose X-Forwarded-For names the client, for limits per client address (api/client-address.ts). Default none. */
  trustedProxies?: TrustedProxies;
  /** Unknown or revoked keys per client address (api/rate-limit.ts); the coordinator shares it with the stream upgrades. Default: one of its own from `rateLimits`; null: none. */
  rejectedKeys?: RejectedKeyLimit | null;
  /** Renders labels and reports (coordinator/api/pdf-renderer.ts). Default: in process, in slices; the coordinator passes a worker thread. */
  pdf?: PdfRenderer;
  /** The operator station's actions on cells (coordinator/fleet/operator-station.ts). Default: refuses them. */
  station?: OperatorStation;
  /**
   * The verified API keys (coordinator/auth/api-key-cache.ts); DELETE /v1/keys/{id} revokes through it.
   * Default: a cache over `db` that hears of no other coordinator's revocations (the coordinator
   * passes one fed by its cluster bus when it shares PostgreSQL).
   */
  apiKeys?: ApiKeyCache;
}

export type LiveView = CellStreamHub & { watchers(cellId: string): number };

export interface IceServer {
  urls: string[];
  username?: string;
  credential?: string;
}

const NO_FORWARDING: LiveForwarding = { holderOf: async () => undefined, cellOfRun: async () => undefined };

const noFleet = (): never => {
  throw new AssayError("contract_validation_failed", "this coordinator runs no fleet, so no cell can be answered from the operator station");
};
const NO_STATION: OperatorStation = { confirmScene: noFleet, abortEpisode: noFleet, labelEpisode: noFleet, intervene: noFleet, interventionDone: noFleet, invalidatePrevious: noFleet };

const NO_LIVE: LiveView = { cameras: () => [], watchCamera: () => () => undefined, watchState: () => () => undefined, watchers: () => 0 };

export type CompiledApiDeps = Required<ApiDeps>;

const REQUIRED = ["db", "fleet", "runEvents", "scheduler", "pins", "urls", "objects", "metrics"] as const;
const OPTIONAL = [
  "clock", "environments", "sseHeartbeatMs", "docsDir", "log", "budgetGuard", "rateLimits", "quoteValidityMs", "archives", "live", "iceServers",
  "models", "modelMirror", "preflight", "backfill", "exportsQueuedPerAccount", "endRun", "completeWithoutRecordings", "metricsAccess", "webhooksAllowLoopback", "sseIdleMs", "liveForwarding", "pdf",
  "trustedProxies", "rejectedKeys", "connectionCaps", "liveAccess", "station", "thumbnails", "apiKeys", "recordingWaits",
] as const;

/** An event stream with no event for this long is closed (a client reconnects and reads the history again). */
export const DEFAULT_SSE_IDLE_MS = 15 * 60_000;

/** How long a pre-flight waits for an endpoint by default: a first inference may compile or load weights. */
export const DEFAULT_PREFLIGHT_TIMEOUT_MS = 30_000;
const URL_KEYS = ["baseUrl", "artifactUrl", "streamsUrl", "docsUrl"] as const;

const here = dirname(fileURLToPath(import.meta.url));

export function compileApiDeps(raw: ApiDeps): CompiledApiDeps {
  const known = new Set<string>([...REQUIRED, ...OPTIONAL]);
  for (const key of Object.keys(raw)) {
    if (!known.has(key)) throw new Error(`unknown API option "${key}"; known: ${[...known].join(", ")}`);
  }
  for (const key of REQUIRED) {
    if (raw[key] === undefined || raw[key] === null) throw new Error(`API option "${key}" is required`);
  }
  if (typeof raw.scheduler.kick !== "function") throw new Error(`API option "scheduler" must have a kick() method`);
  if (typeof raw.fleet.connectedCells !== "function") throw new Error(`API option "fleet" must implement FleetView.connectedCells()`);
  const urls = {} as ApiUrls;
  for (const key of URL_KEYS) {
    const value = raw.urls[key];
    if (typeof value !== "string") throw new Error(`API option urls.${key} is required`);
    try { new URL(value); } catch { throw new Error(`API option urls.${key} must be an absolute URL; got ${JSON.stringify(value)}`); }
    urls[key] = value.replace(/\/+$/, "");
  }
  for (const key of Object.keys(raw.urls)) {
    if (!(URL_KEYS as readonly string[]).includes(key)) throw new Error(`unknown API option "urls.${key}"; known: ${URL_KEYS.join(", ")}`);
  }
  const sseHeartbeatMs = raw.sseHeartbeatMs ?? 15_000;
  if (!Number.isFinite(sseHeartbeatMs) || sseHeartbeatMs <= 0) throw new Error(`API option sseHeartbeatMs must be a positive number; got ${sseHeartbeatMs}`);
  const rateLimits = raw.rateLimits === undefined || raw.rateLimits === "off" ? "off" : validateRateLimits(raw.rateLimits);
  const trustedProxies = raw.trustedProxies ?? NO_TRUSTED_PROXIES;
  return {
    ...raw,
    urls,
    clock: raw.clock ?? (() => new Date()),
    environments: raw.environments ?? loadEnvironments(),
    sseHeartbeatMs,
    docsDir: raw.docsDir ?? join(here, "..", "..", "docs"),
    log: raw.log ?? ((message, error) => console.error(message, error)),
    budgetGuard: raw.budgetGuard ?? { checkAccount: async () => 0 },
    rateLimits,
    quoteValidityMs: raw.quoteValidityMs ?? QUOTE_VALIDITY_MS,
    archives: raw.archives ?? { kick: () => undefined },
    live: raw.live ?? NO_LIVE,
    iceServers: raw.iceServers ?? [],
    models: raw.models ?? DEFAULT_MODEL_LIMITS,
    endRun: raw.endRun ?? (async () => false),
    completeWithoutRecordings: raw.completeWithoutRecordings ?? (async () => false),
    recordingWaits: raw.recordingWaits ?? { reason: () => undefined },
    metricsAccess: raw.metricsAccess ?? "open",
    sseIdleMs: raw.sseIdleMs ?? DEFAULT_SSE_IDLE_MS,
    connectionCaps: raw.connectionCaps ?? new ConnectionCaps(),
    thumbnails: raw.thumbnails ?? new EpisodeThumbnails(),
    liveAccess: raw.liveAccess ?? createLiveAccessWatch({ db: raw.db, fleet: raw.fleet, runEvents: raw.runEvents }),
    webhooksAllowLoopback: raw.webhooksAllowLoopback ?? false,
    modelMirror: raw.modelMirror ?? null,
    preflight: raw.preflight ?? { timeoutMs: DEFAULT_PREFLIGHT_TIMEOUT_MS },
    backfill: raw.backfill ?? createRunBackfill({ db: raw.db }),
    exportsQueuedPerAccount: raw.exportsQueuedPerAccount ?? DEFAULT_EXPORTS_QUEUED_PER_ACCOUNT,
    liveForwarding: raw.liveForwarding ?? NO_FORWARDING,
    trustedProxies,
    rejectedKeys: raw.rejectedKeys !== undefined ? raw.rejectedKeys : rejectedKeysByAddress(rateLimits, trustedProxies),
    pdf: raw.pdf ?? inProcessPdfRenderer(),
    station: raw.station ?? NO_STATION,
    apiKeys: raw.apiKeys ?? new ApiKeyCache({ db: raw.db }),
  };
}
