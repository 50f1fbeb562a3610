/**
 * The coordinator's composition root. `startFleet` builds the fleet side in dependency order and
 * passes each part to the next: the cell registry, the run lifecycle (which tells the registry's
 * cells to cancel), the budget guard (which stops runs through the lifecycle), the scheduler (which
 * asks the guard), the link context the CellLink handlers share, the gRPC server (transport only)
 * and its watchdog. `startCoordinator` opens the store and the artifact store (a folder or a bucket,
 * `artifactsUrl`), creates the webhook worker (the lifecycle kicks it after every ending), starts
 * the fleet, the housekeeping loops (queue windows, retention sweeper) and the HTTP API, and stops
 * them in reverse order. Nothing is bound late.
 */
import { createRunBackfill } from "./runs/run-backfill.js";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadFirmwarePins } from "../firmware-pins/pins.js";
import { createApiApp } from "./api/app.js";
import { answerClientErrors } from "./api/client-errors.js";
import { compileTrustedProxies } from "./api/client-address.js";
import { capConnectionsPerAddress, httpServerOptions } from "./api/connection-guard.js";
import { ArtifactStore } from "./artifacts/artifact-store.js";
import { createBudgetGuard, type BudgetGuard } from "./scheduler/budget-guard.js";
import { startRetentionSweeper } from "./data/retention-sweeper.js";
import { startHeadlinePriorRefit } from "./runs/headline-priors.js";
import { createArchiveWorker, type ArchiveWorker } from "./exports/archive-worker.js";
import { calibrationExportJobs } from "./exports/calibration-exports.js";
import { runExportJobs } from "./exports/run-exports.js";
import type { ErrorCode } from "./errors/codes.js";
import { LinkError } from "./errors/link-errors.js";
import { startQueueWindowWatch } from "./scheduler/queue-windows.js";
import { createOperatorStation, type OperatorStation } from "./fleet/operator-station.js";
import { createScheduler, type Scheduler } from "./scheduler/scheduler.js";
import { createWebhookWorker, type WebhookWorker } from "./webhooks/delivery-worker.js";
import { ensureAdminKey, ensureOperatorKey } from "./auth/bootstrap.js";
import { CATALOG_ACCOUNT_ID, seedTasks } from "./tasks/task-catalog.js";
import { enrollCell } from "./fleet/enrollment.js";
import { createFleetMetrics } from "./cells/fleet-metrics.js";
import { compileFleetOptions, type FleetOptions } from "./fleet/fleet-options.js";
import type { FleetView } from "./cells/fleet-view.js";
import { startCellLinkServer } from "./fleet/grpc-server.js";
import type { LinkContext } from "./fleet/link-context.js";
import { startLinkWatchdog } from "./fleet/link-watchdog.js";
import { FinishesInFlight } from "./fleet/finishes-in-flight.js";
import { startRunCompletionSweep } from "./fleet/run-completion.js";
import { RecordingWaits } from "./fleet/recording-waits.js";
import { CellRegistry } from "./cells/registry.js";
import { AttentionPager, outboxPage } from "./fleet/attention-pager.js";
import { createMetricsRegistry } from "./metrics.js";
import { databaseLocation, exportsWorkDir, objectStoreOf, type CoordinatorOptions } from "./options.js";
import { RunEvents } from "./runs/run-events.js";
import { createRunLifecycle, type RunLifecycle } from "./lifecycle/run-lifecycle.js";
import type { ObjectStore } from "./storage/object-store.js";
import { openDatabase, type Db } from "./store/database.js";
import { storeStatementMetrics } from "./store/statement-metrics.js";
import { startClusterBus, type ClusterBus } from "./cluster/cluster-bus.js";
import { ApiKeyCache } from "./auth/api-key-cache.js";
import { joinCluster, type ClusterLinks } from "./cluster/cluster-links.js";
import { newCoordinatorId, startCoordinatorLease } from "./cluster/coordinator-lease.js";
import { LiveHub } from "./streams/live-hub.js";
import { acceptStreamUpgrades } from "./streams/stream-upgrade.js";
import { rejectedKeysByAddress } from "./api/rate-limit.js";
import { EpisodeThumbnails } from "./artifacts/episode-thumbnail.js";
import { workerDatasetWriter } from "./exports/dataset-writer.js";
import { ConnectionCaps } from "./streams/connection-caps.js";
import { createLiveAccessWatch } from "./streams/live-access-watch.js";
import { createWebRtcSignalling } from "./streams/webrtc/webrtc-signalling.js";
import { hostname } from "node:os";
import type { LiveForwarding } from "./streams/live-forwarding.js";
import { workerPdfRenderer } from "./api/pdf-renderer.js";

export type { FleetOptions } from "./fleet/fleet-options.js";

/** The running fleet side: what the API and the tests reach. */
export interface Fleet {
  /** The CellLink port actually bound. */
  port: number;
  /** Live fleet for the API (GET /v1/robots duty cycles, streams). */
  fleet: FleetView;
  registry: CellRegistry;
  lifecycle: RunLifecycle;
  scheduler: Scheduler;
  budgetGuard: BudgetGuard;
  /** Runs waiting for recordings, as the run-completion sweep last saw them (status_detail, /metrics). */
  recordingWaits: RecordingWaits;
  /** Live camera frames and state of the cells, while someone watches. */
  live: LiveHub;
  /** Live views of cells held by other coordinators (several coordinators on one database). */
  forwarding?: LiveForwarding;
  /** Cuts a cell's stream now (e.g. right after revokeCell); its held episode is requeued. */
  disconnect(cellId: string, message: string): void;
  /** The operator station's actions on cells (scene ready, abort, mark the previous episode invalid). */
  station: OperatorStation;
  /** Stops scheduling, closes every stream and shuts the server down. */
  stop(): Promise<void>;
}

/** Builds and starts the fleet side over an open store. */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const o = compileFleetOptions(options);
  // Messages for cells held by other coordinators go through the cluster, joined below once the
  // registry and scheduler it delivers to exist.
  let cluster: (ClusterLinks & { stop(): Promise<void> }) | undefined;
  const registry = new CellRegistry({ pins: o.pins, now: () => o.now().getTime(), relay: async (cellId, message) => (await cluster?.relay(cellId, message)) ?? false });
  const metrics = createFleetMetrics(o.metricsRegistry);
  const lifecycle = createRunLifecycle({
    runEvents: o.runEvents, cells: registry, pins: o.pins, baseUrl: o.baseUrl, streamsUrl: o.streamsUrl,
    endedHooks: o.endedHooks, now: o.now, logger: o.logger, recordingWaitMs: o.recordingWaitMs,
  });
  const budgetGuard = createBudgetGuard({ db: o.db, lifecycle, pins: o.pins });
  const scheduler = createScheduler({
    db: o.db, registry, lifecycle, metrics, logger: o.logger, intervalMs: o.schedulerIntervalMs, now: o.now, budget: budgetGuard,
    ...(o.cluster ? { peers: { kick: () => o.cluster!.bus.publish({ type: "kick" }) } } : {}),
  });
  if (o.cluster) {
    cluster = joinCluster({
      db: o.db, bus: o.cluster.bus, coordinatorId: o.cluster.coordinatorId, registry, runEvents: o.runEvents,
      kickLocal: () => scheduler.kickLocal(), now: o.now, logger: o.logger,
    });
  }
  const live = new LiveHub(registry);
  // People are paged: one timer per cell waiting on a person, raised once through the outbox.
  const pager = new AttentionPager({
    afterMs: o.attentionPageMs, now: () => o.now().getTime(), logger: o.logger,
    raise: outboxPage(o.db, o.operatorAccountId, () => { for (const hook of o.outboxHooks) hook(); }),
  });
  const stopPaging = registry.onAttentionChange((cellId, attention) => pager.observe(cellId, attention));
  const recordingWaits = new RecordingWaits({ waitMs: o.recordingWaitMs, logger: o.logger, metrics });
  const context: LinkContext = {
    db: o.db, registry, scheduler, lifecycle, runEvents: o.runEvents, store: new ArtifactStore(o.objects),
    metrics, streamsUrl: o.streamsUrl, live, heartbeatIntervalMs: o.heartbeatIntervalMs, logger: o.logger, now: o.now, stopping: false,
    cluster, messageQueues: new Set(), finishes: new FinishesInFlight(),
    recordingWaits,
  };
  const server = await startCellLinkServer({ context, host: o.host, port: o.port, credentials: o.credentials });
  const stopWatchdog = startLinkWatchdog(context, { heartbeatTimeoutMs: o.heartbeatTimeoutMs, heartbeatIntervalMs: o.heartbeatIntervalMs });
  const stopSweep = startRunCompletionSweep(context, { periodMs: o.runCompletionSweepMs });
  scheduler.start();
  return {
    port: server.port,
    fleet: cluster?.fleet ?? registry,
    forwarding: cluster?.forwarding,
    registry,
    lifecycle,
    scheduler,
    budgetGuard,
    recordingWaits,
    live,
    station: createOperatorStation({
      db: o.db, fleet: cluster?.fleet ?? registry, sendToCell: (cellId, message) => registry.sendToCell(cellId, message),
      scheduler, now: o.now, logger: o.logger,
    }),
    async disconnect(cellId, message) {
      (await (cluster?.fleet ?? registry).session(cellId))?.close(new LinkError("cell_revoked", message));
    },
    async stop() {
      await scheduler.stop();
      await stopWatchdog();
      await stopSweep();
      stopPaging();
      await pager.stop();
      await cluster?.stop();
      await server.stop();
    },
  };
}
export interface RunningCoordinator {
  baseUrl: string;
  artifactUrl: string;
  streamsUrl: string;
  /** host:port the cell agents dial. */
  grpcAddress: string;
  httpPort: number;
  grpcPort: number;
  /** The admin key's secret, only on the start that created it. */
  adminKey?: string;
  /** The operator account's technicians' key (kit operations, cell enrollment), only on the start that created it. */
  operatorKey?: string;
  db: Db;
  /** The artifact store (recordings, exports, models): a folder under the data dir, or a bucket. */
  objects: ObjectStore;
  runEvents: RunEvents;
  /** Enrolls (or re-enrolls, rotating the token) a cell; returns its token, shown once. */
  enrollCell(cellId: string, model: string): Promise<string>;
  /** The run lifecycle (coordinator/lifecycle/run-lifecycle.ts): the one way runs end. */
  lifecycle: RunLifecycle;
  /** Stops a run with a spec code; false when it is unknown or already ended. */
  halt(runId: string, code: ErrorCode, message: string): Promise<boolean>;
  /** The webhook delivery worker (kick() after enqueueing to send without waiting for a poll). */
  webhooks: WebhookWorker;
  /** The archive worker making run and calibration exports. */
  archives: ArchiveWorker;
  /** Live camera frames and state of the cells, while someone watches. */
  live: LiveHub;
  stop(): Promise<void>;
}

export async function startCoordinator(options: CoordinatorOptions): Promise<RunningCoordinator> {
  const objects = objectStoreOf(options);
  const metrics = createMetricsRegistry();
  const db = await openDatabase(databaseLocation(options), {
    poolSize: options.databasePoolSize,
    onStatement: options.storeStatementMetrics ? storeStatementMetrics(metrics, options.databaseUrl ? "postgres" : "sqlite") : undefined,
  });
  const admin = await ensureAdminKey(db, { apiKey: options.apiKey });
  await seedTasks(db);
  const operator = await ensureOperatorKey(db, CATALOG_ACCOUNT_ID);
  const pins = loadFirmwarePins(options.installationsPath);
  // On PostgreSQL other coordinators may share the database: this one joins them (docs/deploy.md).
  const coordinatorId = newCoordinatorId();
  let bus: ClusterBus | undefined;
  if (options.databaseUrl) {
    try {
      bus = await startClusterBus({ db, connectionString: options.databaseUrl, coordinatorId });
    } catch (error) {
      await db.close();
      throw new Error(`could not listen for the other coordinators on the database: ${(error as Error).message}`);
    }
  }
  const clusterBus = bus;
  const runEvents = new RunEvents(clusterBus ? (event) => clusterBus.publish({ type: "run-event", event }) : undefined);

  // Listen first so that port 0 resolves before the public URLs are built.
  const http = createServer(httpServerOptions(options.connections));
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const httpPort = (http.address() as AddressInfo).port;
  const origin = options.publicUrl?.replace(/\/+$/, "") ?? `http://${hostForUrl(options.host)}:${httpPort}`;
  const streamsUrl = options.streamsUrl ?? `${origin.replace(/^http/, "ws")}/streams`;
  const urls = { baseUrl: origin, artifactUrl: `${origin}/artifacts`, streamsUrl, docsUrl: `${origin}/docs` };

  // Held before the first cell connects, so others never see this coordinator's links without it.
  const internalUrl = options.internalUrl?.replace(/\/+$/, "") ?? `http://${internalHost(options.host)}:${httpPort}`;
  const lease = clusterBus ? await startCoordinatorLease({ db, id: coordinatorId, baseUrl: internalUrl, grpcAddress: `${hostForUrl(options.host)}:${options.grpcPort}` }) : undefined;
  const webhooks = createWebhookWorker({ db, ...options.webhooks, allowLoopback: options.webhooksAllowLoopback });
  const cellLink = await startFleet({
    db,
    runEvents,
    pins,
    objects,
    baseUrl: urls.baseUrl,
    streamsUrl,
    host: options.host,
    port: options.grpcPort,
    metricsRegistry: metrics,
    // Deliver run.completed and the kinds' events without waiting for the worker's poll.
    endedHooks: [() => webhooks.kick()],
    outboxHooks: [() => webhooks.kick()],
    attentionPageMs: options.attentionPageMs,
    recordingWaitMs: options.recordingWaitMs,
    runCompletionSweepMs: options.runCompletionSweepMs,
    operatorAccountId: CATALOG_ACCOUNT_ID,
    ...(clusterBus ? { cluster: { coordinatorId, bus: clusterBus } } : {}),
  }).catch(async (error: Error) => {
    http.close();
    await lease?.stop();
    await clusterBus?.close();
    await db.close();
    throw new Error(`could not start the cell link on ${options.host}:${options.grpcPort}: ${error.message}`);
  });

  const { lifecycle } = cellLink;
  lease?.setGrpcAddress(`${hostForUrl(options.host)}:${cellLink.port}`);
  const stopQueueWindows = startQueueWindowWatch({ halt: { db, lifecycle }, windowsMs: options.queueWindowsMs, intervalMs: options.queueCheckIntervalMs });
  const stopRetentionSweeper = startRetentionSweeper({ db, objects, intervalMs: options.retentionSweepMs });
  // The ICC prior learns from the fleet's completed runs: refitted at start and every priorRefitMs, off the request path.
  const stopPriorRefit = startHeadlinePriorRefit({ db, intervalMs: options.priorRefitMs });
  // Resumes whatever the outbox holds from before a stop or crash.
  webhooks.start();
  // Large runs whose creation a crash or stop cut short get the rest of their episodes.
  const backfill = createRunBackfill({ db });
  void backfill.resume().then((runs) => {
    if (runs.length > 0) {
      console.log(`resumed the creation of ${runs.length} run(s): ${runs.join(", ")}`);
      cellLink.scheduler.kick();
    }
  }).catch((error: Error) => console.error(`resuming run creation failed: ${error.stack ?? error}`));
  // Makes the exports requested, and again those a stop or crash interrupted; their datasets are written on a worker thread.
  const datasetWriter = workerDatasetWriter();
  const archives = createArchiveWorker({
    concurrency: options.exports.concurrency,
    sweepMs: options.exports.sweepMs,
    kinds: [runExportJobs({
      db, objects, workDir: exportsWorkDir(options), datasetWriter, baseUrl: urls.baseUrl, now: () => new Date(),
      availabilityMs: options.exports.availabilityMs, pendingUploadWaitMs: options.exports.pendingUploadWaitMs,
    }), calibrationExportJobs({ db, objects, workDir: exportsWorkDir(options), datasetWriter, now: () => new Date(), availabilityMs: options.exports.availabilityMs })],
  });
  // Archives past their availability are expired (and deleted) before the API answers.
  await archives.start();

  const trustedProxies = compileTrustedProxies(options.trustedProxies);
  // Unknown or revoked API keys per client address: one limit for /v1, /artifacts, /metrics and the streams.
  const rejectedKeys = rejectedKeysByAddress(options.rateLimits, trustedProxies);
  // Labels and reports are laid out on a worker thread, never on the loop that answers the API and the fleet.
  const pdf = workerPdfRenderer();
  // Open live views stay bound to the grant that admitted them; long-lived connections are capped.
  const liveAccess = createLiveAccessWatch({ db, fleet: cellLink.fleet, runEvents, assignments: cellLink.registry, recheckMs: options.liveRecheckMs });
  const connectionCaps = new ConnectionCaps(options.connectionCaps);
  // Verified keys kept in memory; on a shared PostgreSQL the bus tells of other coordinators' revocations,
  // which also close the live views opened with the key here.
  const apiKeys = new ApiKeyCache({ db, revocations: clusterBus });
  clusterBus?.subscribe((message) => {
    if (message.type === "key-revoked") void liveAccess.recheck();
  });
  const app = createApiApp({
    db,
    apiKeys,
    pdf,
    fleet: cellLink.fleet,
    liveAccess,
    connectionCaps,
    // Stills of episodes for the console's failure grid, cached in memory (bounded).
    thumbnails: new EpisodeThumbnails(),
    runEvents,
    scheduler: cellLink.scheduler,
    recordingWaits: cellLink.recordingWaits,
    pins,
    urls,
    objects,
    metrics,
    budgetGuard: cellLink.budgetGuard,
    rateLimits: options.rateLimits,
    quoteValidityMs: options.quoteValidityMs,
    archives,
    live: cellLink.live,
    iceServers: options.iceServers,
    modelMirror: options.modelMirror ?? null,
    models: options.models,
    endRun: (runId, ending) => cellLink.lifecycle.end(db, runId, ending),
    completeWithoutRecordings: (runId, by) => cellLink.lifecycle.completeWithoutRecordings(db, runId, by),
    station: cellLink.station,
    metricsAccess: isLoopbackHost(options.host) ? "open" : "operator",
    webhooksAllowLoopback: options.webhooksAllowLoopback,
    preflight: { timeoutMs: options.preflightTimeoutMs },
    trustedProxies,
    rejectedKeys,
    backfill,
    exportsQueuedPerAccount: options.exports.queuedPerAccount,
    ...(cellLink.forwarding ? { liveForwarding: cellLink.forwarding } : {}),
  });
  http.on("request", app);
  // Slow, malformed or too many connections: answered with the envelope and destroyed.
  answerClientErrors(http, urls.docsUrl, options.connections);
  capConnectionsPerAddress(http, options.connections, trustedProxies, urls.docsUrl);
  // Live views: WebSocket upgrades under the streams URL go to the WebRTC signalling.
  const signalling = createWebRtcSignalling({ hub: cellLink.live, iceServers: options.iceServers });
  const stopUpgrades = acceptStreamUpgrades(http, {
    db, fleet: cellLink.fleet, signalling, operatorAccountId: CATALOG_ACCOUNT_ID, streamsUrl, docsUrl: urls.docsUrl, now: () => new Date(),
    forwarding: cellLink.forwarding, caps: connectionCaps, access: liveAccess, rejectedKeys, keys: apiKeys,
  });

  return {
    ...urls,
    grpcAddress: `${hostForUrl(options.host)}:${cellLink.port}`,
    httpPort,
    grpcPort: cellLink.port,
    adminKey: admin.created ? admin.secret : undefined,
    operatorKey: operator.created ? operator.secret : undefined,
    db,
    objects,
    runEvents,
    enrollCell: (cellId, model) => enrollCell(db, { cellId, model }),
    lifecycle,
    halt: (runId, code, message) => lifecycle.end(db, runId, { status: "stopped", code, message }),
    webhooks,
    archives,
    live: cellLink.live,
    async stop() {
      liveAccess.stop();
      stopUpgrades();
      await signalling.close();
      await archives.stop();
      await datasetWriter.close();
      await stopQueueWindows();
      await stopRetentionSweeper();
      await stopPriorRefit();
      await closeHttp(http);
      await webhooks.stop();
      await cellLink.stop();
      await pdf.close();
      await lease?.stop();
      await clusterBus?.close();
      await db.close();
    },
  };
}

/** The host other machines reach this one at: the listen address, or the host name when listening on every address. */
function internalHost(host: string): string {
  return host === "0.0.0.0" || host === "::" ? hostname() : hostForUrl(host);
}

function hostForUrl(host: string): string {
  if (host === "0.0.0.0" || host === "::") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

function closeHttp(server: Server): Promise<void> {
  return new Promise((resolve) => {
    // SSE streams hold connections open; cut them so close() can finish.
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** Whether the HTTP listener is reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}
