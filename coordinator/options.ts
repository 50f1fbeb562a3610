/**
 * The coordinator's one options object. `compileCoordinatorOptions` fills defaults, validates and
 * rejects unknown keys; environment variables are read by the process entry, never here.
 */
import { join, resolve } from "node:path";
import { DEFAULT_PREFLIGHT_TIMEOUT_MS } from "./api/api-deps.js";
import { DEFAULT_RATE_LIMITS, validateRateLimits, type RateLimits } from "./api/rate-limit.js";
import { compileTrustedProxies } from "./api/client-address.js";
import { compileConnectionOptions, type ConnectionOptions } from "./api/connection-guard.js";
import { QUOTE_VALIDITY_MS } from "./billing/quotes.js";
import { DEFAULT_RETENTION_SWEEP_MS } from "./data/retention-sweeper.js";
import { DEFAULT_PRIOR_REFIT_MS } from "./runs/headline-priors.js";
import { compileModelLimits, type ModelLimits } from "./models/model-limits.js";
import { DEFAULT_EXPORTS_QUEUED_PER_ACCOUNT } from "./exports/export-admission.js";
import type { ObjectStore } from "./storage/object-store.js";
import { objectStoreFromUrl, parseStoreUrl, type S3Connection } from "./storage/store-from-url.js";
import { DEFAULT_QUEUE_CHECK_INTERVAL_MS, DEFAULT_QUEUE_WINDOWS_MS, type QueueWindowsMs } from "./scheduler/queue-windows.js";
import { WEBHOOK_DEFAULTS } from "./webhooks/delivery-worker.js";
import { compileConnectionCapsOptions, type CompiledConnectionCapsOptions, type ConnectionCapsOptions } from "./streams/connection-caps.js";
import { DEFAULT_LIVE_RECHECK_MS } from "./streams/live-access-watch.js";
import { DEFAULT_ATTENTION_PAGE_MS } from "./fleet/attention-pager.js";
import { RUN_COMPLETION_SWEEP_MS } from "./fleet/run-completion.js";
import { DEFAULT_RECORDING_WAIT_MS } from "./runs/recording-wait.js";

/** Webhook delivery timing (see coordinator/webhooks/delivery-worker.ts). */
export interface WebhookTimingOptions {
  /** First retry delay; later ones double. Default 1000 ms. */
  retryBaseMs: number;
  /** Longest wait between two attempts. Default 1 h. */
  retryCapMs: number;
  /** Give up on an event this old. Default 3 days. */
  maxAgeMs: number;
  /** Outbox poll period. Default 1000 ms. */
  pollMs: number;
  /** Per-attempt timeout. Default 5000 ms. */
  timeoutMs: number;
}

export interface CoordinatorOptions {
  /** HTTP listen address. Default 127.0.0.1. */
  host: string;
  /** HTTP port for /v1, /artifacts, /docs and /metrics. Default 8080; 0 picks a free port. */
  port: number;
  /** gRPC port for cell agents. Default 50051; 0 picks a free port. */
  grpcPort: number;
  /** Where the SQLite file and the artifact store live. Default ./.assay. */
  dataDir: string;
  /**
   * The store on PostgreSQL, `postgres://user:password@host:port/database` (ASSAY_DATABASE_URL).
   * Default none: SQLite at `<dataDir>/assay.sqlite`. Several coordinators may share one database.
   */
  databaseUrl?: string;
  /**
   * Connections the coordinator keeps to PostgreSQL (ASSAY_DATABASE_POOL_SIZE): each transaction holds
   * one for its life, statements outside a transaction take any. Default 10; 1..100. Unused on SQLite.
   */
  databasePoolSize: number;
  /**
   * Count the store's statements on /metrics (`assay_store_statements_total{engine, verb}`,
   * `assay_store_run_reads_total`; ASSAY_STORE_STATEMENT_METRICS=1). Default false: nothing counted.
   */
  storeStatementMetrics: boolean;
  /**
   * Where recordings, videos, exports and models are kept (docs/storage.md): unset, files under
   * `<dataDir>/artifacts`; `s3://bucket/prefix`, objects in that bucket (upload spools stay under
   * `<dataDir>`). Default unset.
   */
  artifactsUrl?: string;
  /** The bucket's endpoint, region and credentials (from AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, ...). Default the AWS SDK's own chain. */
  s3: S3Connection;
  /** Admin key to create on first start (must start with asy_live_); otherwise one is generated. */
  apiKey?: string;
  /** Public base URL when behind a proxy; default http://<host>:<port>. */
  publicUrl?: string;
  /**
   * Where other coordinators on the same database reach this one's HTTP port, to pass it live views
   * of the cells it holds (ASSAY_INTERNAL_URL). Default http://<host>:<port>, with this machine's
   * host name when listening on every address.
   */
  internalUrl?: string;
  /** Public streams URL; default ws://<host>:<port>/streams. */
  streamsUrl?: string;
  /** Firmware pin table; default firmware-pins/installations.json. */
  installationsPath?: string;
  /**
   * Rate limits (api/rate-limit.ts): per account (all its keys share one key's worth),
   * and for requests without a key per client address. Default general 20/s burst 40, POST
   * /v1/runs 5/s burst 10, anonymous 20/s burst 40, anonymous PDF renders 1/s burst 5.
   */
  rateLimits: RateLimits;
  /** Connection timeouts and the cap per client address (api/connection-guard.ts); any subset may be given. */
  connections: ConnectionOptions;
  /**
   * Reverse proxies whose `X-Forwarded-For` names the client (ASSAY_TRUSTED_PROXIES): addresses or
   * CIDR ranges. Default none: the client is the socket's peer (api/client-address.ts).
   */
  trustedProxies: string[];
  /** Longest wait for a run's first assignment per priority. Default burst 5 min, standard 2 h, soak 24 h. */
  queueWindowsMs: QueueWindowsMs;
  /** How often queue windows are checked. Default 10000 ms. */
  queueCheckIntervalMs: number;
  /** Webhook delivery timing; any subset may be given. */
  webhooks: WebhookTimingOptions;
  /** How often expired recordings are purged. Default 1 h. */
  retentionSweepMs: number;
  /** How often the headline's ICC prior is refitted from the fleet (also once at start). Default 1 h. */
  priorRefitMs: number;
  /** How long a quote can back a submission. Default 15 min. */
  quoteValidityMs: number;
  /** Run and calibration exports (coordinator/exports/). */
  exports: ExportOptions;
  /** STUN/TURN servers offered to WebRTC viewers (stream descriptors). Default none: host candidates. */
  iceServers: Array<{ urls: string[]; username?: string; credential?: string }>;
  /** The operator's local model mirror, `<dir>/<org>/<name>[/<revision>]/model.onnx` (coordinator/models/model-mirror.ts). Default none. */
  modelMirror?: string;
  /**
   * Bounds of model uploads (coordinator/models/model-limits.ts, docs/api.md "Models"): `maxBytes`
   * a file (default 2 GiB), `maxChunkBytes` a PUT (64 MiB), `accountQuotaBytes` an account's
   * declared and ready models together (20 GiB), `maxPendingUploads` an account's uploads in
   * progress (4). Any subset may be given.
   */
  models: ModelLimits;
  /** How long an endpoint policy's pre-flight waits at submission. Default 30000 ms. */
  preflightTimeoutMs: number;
  /**
   * Let webhooks reach receivers on loopback (127.0.0.0/8, ::1): for tests and a local demo. Private,
   * link-local and reserved addresses are refused regardless. Default false.
   */
  webhooksAllowLoopback: boolean;
  /**
   * Long-lived connections open at once, per kind (`event_streams`, `mjpeg_viewers`,
   * `signalling_websockets`), each `{perKey, perAccount}`. Default 10 per key and 30 per account for
   * each kind; past a cap a new one is refused 429 rate_limited (Retry-After `retryAfterS`, default 5).
   */
  connectionCaps: CompiledConnectionCapsOptions;
  /** The backstop re-check of open live views' access (events do the prompt work). Default 5000 ms. */
  liveRecheckMs: number;
  /**
   * A cell waiting on a person (a scene to set, an episode to judge) this long raises webhook event
   * `cell.attention_needed`, once per wait, to the operator account's endpoints (ASSAY_ATTENTION_PAGE_S;
   * docs/operators.md, "Paging"). Default 120000 ms (2 minutes).
   */
  attentionPageMs: number;
  /**
   * How long a run whose episodes have all finished waits for recordings its cells have not uploaded, counted from
   * the finish of the newest one's episode (ASSAY_RECORDING_WAIT_S; docs/storage.md, "A bounded wait for
   * recordings"). Then the run completes without them, recorded missing; a late upload is still taken. Default 6 h.
   */
  recordingWaitMs: number;
  /** Time between two looks of the run-completion sweep, which also ends those waits. Default 10000 ms. */
  runCompletionSweepMs: number;
}

export interface ExportOptions {
  /** Archives made at once. Default 1. */
  concurrency: number;
  /** How long a ready download stays available (never past the run's data retention). Default 7 days. */
  availabilityMs: number;
  /** How long a completed run's unfinished uploads are awaited before their episodes are left out. Default 10 min. */
  pendingUploadWaitMs: number;
  /** How often expired archives are swept (and the queue re-read). Default 60000 ms. */
  sweepMs: number;
  /** Archives (run and calibration exports) one account may have queued or being made at once; one more is 429. Default 4. */
  queuedPerAccount: number;
}

/** PostgreSQL connections per coordinator unless ASSAY_DATABASE_POOL_SIZE says otherwise. */
export const DEFAULT_DATABASE_POOL_SIZE = 10;

export const EXPORT_DEFAULTS: ExportOptions = {
  concurrency: 1, availabilityMs: 7 * 24 * 3_600_000, pendingUploadWaitMs: 10 * 60_000, sweepMs: 60_000, queuedPerAccount: DEFAULT_EXPORTS_QUEUED_PER_ACCOUNT,
};

type RawCoordinatorOptions = Partial<Omit<CoordinatorOptions, "queueWindowsMs" | "webhooks" | "rateLimits" | "exports" | "iceServers" | "connections" | "models" | "connectionCaps">> & {
  connections?: Partial<ConnectionOptions>;
  models?: Partial<ModelLimits>;
  connectionCaps?: ConnectionCapsOptions;
  /** ICE server URLs ("stun:host:3478", "turn:host:3478?transport=udp"), or objects with credentials. */
  iceServers?: Array<string | { urls: string[]; username?: string; credential?: string }>;
  exports?: Partial<ExportOptions>;
  queueWindowsMs?: Partial<QueueWindowsMs>;
  webhooks?: Partial<WebhookTimingOptions>;
  rateLimits?: Partial<RateLimits>;
};

const KNOWN = new Set([
  "host", "port", "grpcPort", "dataDir", "databaseUrl", "databasePoolSize", "storeStatementMetrics", "artifactsUrl", "s3", "apiKey", "publicUrl", "internalUrl", "streamsUrl", "installationsPath",
  "rateLimits", "queueWindowsMs", "queueCheckIntervalMs", "webhooks", "retentionSweepMs", "priorRefitMs", "quoteValidityMs", "exports", "iceServers",
  "modelMirror", "models", "preflightTimeoutMs", "webhooksAllowLoopback", "connections", "trustedProxies", "connectionCaps", "liveRecheckMs",
  "attentionPageMs", "recordingWaitMs", "runCompletionSweepMs",
]);

function positiveMs(name: string, value: number): number {
  if (!(Number.isFinite(value) && value > 0)) throw new Error(`${name} must be a positive number of milliseconds; got ${value}`);
  return value;
}

export function compileCoordinatorOptions(raw: RawCoordinatorOptions = {}): CoordinatorOptions {
  for (const key of Object.keys(raw)) {
    if (!KNOWN.has(key)) throw new Error(`unknown coordinator option "${key}"; known: ${[...KNOWN].join(", ")}`);
  }
  const port = raw.port ?? 8080;
  const grpcPort = raw.grpcPort ?? 50051;
  for (const [name, value] of [["port", port], ["grpcPort", grpcPort]] as const) {
    if (!Number.isInteger(value) || value < 0 || value > 65535) throw new Error(`${name} must be an integer 0..65535; got ${value}`);
  }
  if (raw.databaseUrl !== undefined && !/^postgres(ql)?:\/\/[^/\s]+\/[^/\s]+$/.test(raw.databaseUrl)) {
    throw new Error(`ASSAY_DATABASE_URL must be a PostgreSQL URL, postgres://user:password@host:5432/database, or "embedded" (npm start: a PostgreSQL kept in the data dir); got "${redactPassword(raw.databaseUrl)}"`);
  }
  const databasePoolSize = raw.databasePoolSize ?? DEFAULT_DATABASE_POOL_SIZE;
  if (!Number.isInteger(databasePoolSize) || databasePoolSize < 1 || databasePoolSize > 100) {
    throw new Error(`ASSAY_DATABASE_POOL_SIZE must be a whole number of connections from 1 to 100; got ${databasePoolSize}`);
  }
  // Refused here, before anything starts, with the message naming the value.
  parseStoreUrl(raw.artifactsUrl);
  if (raw.apiKey !== undefined && !/^asy_live_[A-Za-z0-9]{16,}$/.test(raw.apiKey)) {
    throw new Error("ASSAY_API_KEY must look like asy_live_ followed by at least 16 letters or digits");
  }
  const queueWindowsMs = { ...DEFAULT_QUEUE_WINDOWS_MS, ...raw.queueWindowsMs };
  for (const [tier, ms] of Object.entries(queueWindowsMs)) positiveMs(`queueWindowsMs.${tier}`, ms);
  const { concurrency: _concurrency, perAccountConcurrency: _perAccount, allowLoopback: _loopback, ...webhookDefaults } = WEBHOOK_DEFAULTS;
  const webhooks = { ...webhookDefaults, ...raw.webhooks };
  for (const key of Object.keys(webhooks)) {
    if (!(key in webhookDefaults)) throw new Error(`unknown webhooks option "${key}"; known: ${Object.keys(webhookDefaults).join(", ")}`);
    positiveMs(`webhooks.${key}`, webhooks[key as keyof WebhookTimingOptions]);
  }
  const exports = { ...EXPORT_DEFAULTS, ...raw.exports };
  for (const key of Object.keys(exports)) {
    if (!(key in EXPORT_DEFAULTS)) throw new Error(`unknown exports option "${key}"; known: ${Object.keys(EXPORT_DEFAULTS).join(", ")}`);
    const value = exports[key as keyof ExportOptions];
    if (key === "concurrency" || key === "queuedPerAccount") {
      if (!(Number.isInteger(value) && value > 0)) throw new Error(`exports.${key} must be a positive integer; got ${value}`);
    } else positiveMs(`exports.${key}`, value);
  }
  const iceServers = (raw.iceServers ?? []).map((server, i) => {
    const entry = typeof server === "string" ? { urls: [server] } : server;
    for (const url of entry.urls ?? []) {
      if (!/^(stun|stuns|turn|turns):\S+$/.test(url)) throw new Error(`iceServers[${i}]: "${url}" is not a stun:, stuns:, turn: or turns: URL`);
    }
    if (!entry.urls?.length) throw new Error(`iceServers[${i}] needs at least one URL`);
    return entry;
  });
  const trustedProxies = compileTrustedProxies(raw.trustedProxies ?? []).entries;
  return {
    connections: compileConnectionOptions(raw.connections),
    trustedProxies: [...trustedProxies],
    exports,
    iceServers,
    modelMirror: raw.modelMirror ? resolve(raw.modelMirror) : undefined,
    models: compileModelLimits(raw.models),
    preflightTimeoutMs: positiveMs("preflightTimeoutMs", raw.preflightTimeoutMs ?? DEFAULT_PREFLIGHT_TIMEOUT_MS),
    webhooksAllowLoopback: raw.webhooksAllowLoopback ?? false,
    connectionCaps: compileConnectionCapsOptions(raw.connectionCaps),
    liveRecheckMs: positiveMs("liveRecheckMs", raw.liveRecheckMs ?? DEFAULT_LIVE_RECHECK_MS),
    attentionPageMs: positiveMs("attentionPageMs", raw.attentionPageMs ?? DEFAULT_ATTENTION_PAGE_MS),
    recordingWaitMs: positiveMs("recordingWaitMs", raw.recordingWaitMs ?? DEFAULT_RECORDING_WAIT_MS),
    runCompletionSweepMs: positiveMs("runCompletionSweepMs", raw.runCompletionSweepMs ?? RUN_COMPLETION_SWEEP_MS),
    rateLimits: validateRateLimits({ ...DEFAULT_RATE_LIMITS, ...raw.rateLimits }),
    queueWindowsMs,
    queueCheckIntervalMs: positiveMs("queueCheckIntervalMs", raw.queueCheckIntervalMs ?? DEFAULT_QUEUE_CHECK_INTERVAL_MS),
    webhooks,
    retentionSweepMs: positiveMs("retentionSweepMs", raw.retentionSweepMs ?? DEFAULT_RETENTION_SWEEP_MS),
    priorRefitMs: positiveMs("priorRefitMs", raw.priorRefitMs ?? DEFAULT_PRIOR_REFIT_MS),
    quoteValidityMs: positiveMs("quoteValidityMs", raw.quoteValidityMs ?? QUOTE_VALIDITY_MS),
    host: raw.host ?? "127.0.0.1",
    port,
    grpcPort,
    dataDir: resolve(raw.dataDir ?? ".assay"),
    databaseUrl: raw.databaseUrl,
    databasePoolSize,
    storeStatementMetrics: raw.storeStatementMetrics ?? false,
    artifactsUrl: raw.artifactsUrl || undefined,
    s3: raw.s3 ?? {},
    apiKey: raw.apiKey,
    publicUrl: raw.publicUrl,
    internalUrl: raw.internalUrl,
    streamsUrl: raw.streamsUrl,
    installationsPath: raw.installationsPath,
  };
}

/** Where the store lives: the PostgreSQL URL, or the SQLite file in the data dir. */
export function databaseLocation(options: CoordinatorOptions): string {
  return options.databaseUrl ?? join(options.dataDir, "assay.sqlite");
}

/** A database URL fit for a log line or an error: its password replaced by ***. */
export function redactPassword(url: string): string {
  return url.replace(/^(\w+:\/\/[^:@/]*:)[^@/]*@/, "$1***@");
}

/** The artifact store `artifactsUrl` names: a folder under the data dir, or a bucket. */
export function objectStoreOf(options: CoordinatorOptions): ObjectStore {
  return objectStoreFromUrl(options.artifactsUrl, { dataDir: options.dataDir, connection: options.s3 });
}

/** Local folder for the files an export is made from and into (training formats' dataset trees, recordings fetched from a bucket). */
export function exportsWorkDir(options: CoordinatorOptions): string {
  return join(options.dataDir, "exports-work");
}
