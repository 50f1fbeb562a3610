/**
 * The coordinator's composition root: opens the store, starts the CellLink gRPC server (fleet
 * registry, scheduler, artifact uploads), the money and housekeeping loops (budget guard, queue
 * windows, webhook delivery, retention sweeper) and the HTTP API, and stops them in reverse order.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadFirmwarePins } from "../firmware-pins/pins.js";
import { createApiApp } from "./api/app.js";
import { createBudgetGuard, type BudgetGuard } from "./billing/budget-guard.js";
import { startRetentionSweeper } from "./data/retention-sweeper.js";
import type { ErrorCode } from "./errors/codes.js";
import { haltRun, type HaltContext } from "./runs/halt-run.js";
import type { AssignmentBudget } from "./scheduler/scheduler.js";
import { startQueueWindowWatch } from "./scheduler/queue-windows.js";
import { createWebhookWorker, type WebhookWorker } from "./webhooks/delivery-worker.js";
import { ensureAdminKey, ensureOperatorKey } from "./auth/bootstrap.js";
import { CATALOG_ACCOUNT_ID, seedTasks } from "./catalog/tasks.js";
import { enrollCell } from "./fleet/enrollment.js";
import { startCellLinkServer } from "./fleet/grpc-server.js";
import { createMetricsRegistry } from "./metrics.js";
import { artifactsDir, databasePath, type CoordinatorOptions } from "./options.js";
import { RunEvents } from "./runs/run-events.js";
import { openDatabase, type Db } from "./store/database.js";
import * as runsRepo from "./store/runs-repo.js";

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
  runEvents: RunEvents;
  /** Enrolls (or re-enrolls, rotating the token) a cell; returns its token, shown once. */
  enrollCell(cellId: string, model: string): string;
  /** What `haltRun` needs; for components that stop runs (e-stop, endpoint timeouts). */
  haltContext: HaltContext;
  /** Stops a run (see coordinator/runs/halt-run.ts); false when it is unknown or already ended. */
  halt(runId: string, code: ErrorCode, message: string): boolean;
  /** The webhook delivery worker (kick() after enqueueing to send without waiting for a poll). */
  webhooks: WebhookWorker;
  stop(): Promise<void>;
}

export async function startCoordinator(options: CoordinatorOptions): Promise<RunningCoordinator> {
  const db = openDatabase(databasePath(options));
  const admin = ensureAdminKey(db, { apiKey: options.apiKey });
  seedTasks(db);
  const operator = ensureOperatorKey(db, CATALOG_ACCOUNT_ID);
  const pins = loadFirmwarePins(options.installationsPath);
  const metrics = createMetricsRegistry();
  const runEvents = new RunEvents();

  // Listen first so that port 0 resolves before the public URLs are built.
  const http = createServer();
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const httpPort = (http.address() as AddressInfo).port;
  const origin = options.publicUrl?.replace(/\/+$/, "") ?? `http://${hostForUrl(options.host)}:${httpPort}`;
  const streamsUrl = options.streamsUrl ?? `${origin.replace(/^http/, "ws")}/streams`;
  const urls = { baseUrl: origin, artifactUrl: `${origin}/artifacts`, streamsUrl, docsUrl: `${origin}/docs` };

  // The guard needs the registry, which the cell link creates; no scheduler pass can run before
  // the assignment below (passes run from timers, after this function's synchronous part).
  let guard: BudgetGuard | undefined;
  const budget: AssignmentBudget = {
    episodeAllowance: (runId) => (guard ? guard.episodeAllowance(runId) : 0),
    afterEpisodeMetered: (runId) => guard?.afterEpisodeMetered(runId),
  };
  const cellLink = await startCellLinkServer({
    db,
    runsRepo,
    runEvents,
    pins,
    artifactsDir: artifactsDir(options),
    baseUrl: urls.baseUrl,
    streamsUrl,
    host: options.host,
    port: options.grpcPort,
    metricsRegistry: metrics,
    budget,
  }).catch((error: Error) => {
    http.close();
    db.close();
    throw new Error(`could not start the cell link on ${options.host}:${options.grpcPort}: ${error.message}`);
  });

  const haltContext: HaltContext = { db, runEvents, cells: cellLink.registry, completer: cellLink.completer };
  guard = createBudgetGuard({ halt: haltContext, pins });
  const stopQueueWindows = startQueueWindowWatch({ halt: haltContext, windowsMs: options.queueWindowsMs, intervalMs: options.queueCheckIntervalMs });
  const stopRetentionSweeper = startRetentionSweeper({ db, artifactsDir: artifactsDir(options), intervalMs: options.retentionSweepMs });
  const webhooks = createWebhookWorker({ db, ...options.webhooks });
  // Resumes whatever the outbox holds from before a stop or crash.
  webhooks.start();

  const app = createApiApp({
    db,
    fleet: cellLink.fleet,
    runEvents,
    scheduler: cellLink.scheduler,
    pins,
    urls,
    artifactsDir: artifactsDir(options),
    metrics,
    budgetGuard: guard,
    rateLimits: options.rateLimits,
    quoteValidityMs: options.quoteValidityMs,
  });
  http.on("request", app);

  return {
    ...urls,
    grpcAddress: `${hostForUrl(options.host)}:${cellLink.port}`,
    httpPort,
    grpcPort: cellLink.port,
    adminKey: admin.created ? admin.secret : undefined,
    operatorKey: operator.created ? operator.secret : undefined,
    db,
    runEvents,
    enrollCell: (cellId, model) => enrollCell(db, { cellId, model }),
    haltContext,
    halt: (runId, code, message) => haltRun(haltContext, runId, code, message),
    webhooks,
    async stop() {
      stopQueueWindows();
      stopRetentionSweeper();
      await closeHttp(http);
      await webhooks.stop();
      await cellLink.stop();
      db.close();
    },
  };
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
