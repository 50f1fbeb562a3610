/**
 * The coordinator's composition root: opens the store, starts the CellLink gRPC server (fleet
 * registry, scheduler, artifact uploads) and the HTTP API, and stops them in reverse order.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadFirmwarePins } from "../firmware-pins/pins.js";
import { createApiApp } from "./api/app.js";
import { ensureAdminKey } from "./auth/bootstrap.js";
import { seedTasks } from "./catalog/tasks.js";
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
  db: Db;
  runEvents: RunEvents;
  /** Enrolls (or re-enrolls, rotating the token) a cell; returns its token, shown once. */
  enrollCell(cellId: string, model: string): string;
  stop(): Promise<void>;
}

export async function startCoordinator(options: CoordinatorOptions): Promise<RunningCoordinator> {
  const db = openDatabase(databasePath(options));
  const admin = ensureAdminKey(db, { apiKey: options.apiKey });
  seedTasks(db);
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
  }).catch((error: Error) => {
    http.close();
    db.close();
    throw new Error(`could not start the cell link on ${options.host}:${options.grpcPort}: ${error.message}`);
  });

  const app = createApiApp({
    db,
    fleet: cellLink.fleet,
    runEvents,
    scheduler: cellLink.scheduler,
    pins,
    urls,
    artifactsDir: artifactsDir(options),
    metrics,
  });
  http.on("request", app);

  return {
    ...urls,
    grpcAddress: `${hostForUrl(options.host)}:${cellLink.port}`,
    httpPort,
    grpcPort: cellLink.port,
    adminKey: admin.created ? admin.secret : undefined,
    db,
    runEvents,
    enrollCell: (cellId, model) => enrollCell(db, { cellId, model }),
    async stop() {
      await closeHttp(http);
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
