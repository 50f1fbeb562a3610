/**
 * The coordinator's CellLink gRPC server: the fleet side of Assay. It owns the live registry of
 * connected cells, the scheduler that feeds them episodes, the artifact store uploads land in,
 * and the step that completes runs.
 *
 * Transport: insecure credentials, meant for loopback and tests. In a deployment, terminate TLS
 * (mTLS per cell, ideally) in front of this port or pass `credentials`; the bearer cell token
 * authenticates the cell either way and must never cross an untrusted network in clear.
 */
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { Registry } from "prom-client";
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import { CellLinkService, type CellLinkServer } from "../../protocol/gen/cell.js";
import { ArtifactStore } from "../artifacts/artifact-store.js";
import { handleArtifactStatus, handleUploadArtifact } from "../artifacts/upload-service.js";
import { createRunCompleter, type RunCompleter, type RunsRepo } from "../runs/run-results.js";
import type { RunEvents } from "../runs/run-events.js";
import { createScheduler, type AssignmentBudget, type Logger, type Scheduler } from "../scheduler/scheduler.js";
import type { Db } from "../store/database.js";
import { listHeldEpisodes } from "../store/episodes-repo.js";
import { handleConnect } from "./connect-session.js";
import { requeueHeldBy } from "./episode-messages.js";
import { createFleetMetrics } from "./fleet-metrics.js";
import type { FleetView } from "./fleet-view.js";
import type { LinkContext } from "./link-context.js";
import { LinkError } from "./link-errors.js";
import { CellRegistry } from "./registry.js";

export interface CellLinkServerOptions {
  /** The coordinator's store. */
  db: Db;
  /** coordinator/store/runs-repo.ts (getRunRow, setRunStatus, setRunResult). */
  runsRepo: RunsRepo;
  runEvents: RunEvents;
  /** Catalog and installations (firmware check, tier for pricing). */
  pins: FirmwarePins;
  /** Root of the artifact store; the API serves `${artifactsDir}/<run>/<episode>/<file>`. */
  artifactsDir: string;
  /** Public base URL of the API without /v1, for the Result's links. */
  baseUrl: string;
  /** Base of live stream URLs; status events carry `${streamsUrl}/cells/<cell>`. */
  streamsUrl: string;
  /** Listen host; default "127.0.0.1". */
  host?: string;
  /** Listen port; default 0 (any free port, reported back). */
  port?: number;
  /** Server credentials; default insecure (loopback and tests only). */
  credentials?: ServerCredentials;
  /** prom-client registry for the fleet series; default a private one. */
  metricsRegistry?: Registry;
  /** Interval agents are told to heartbeat at; default 1000. */
  heartbeatIntervalMs?: number;
  /** A cell silent this long is disconnected; default 5000. */
  heartbeatTimeoutMs?: number;
  /** Scheduler safety-pass period; default 1000. */
  schedulerIntervalMs?: number;
  logger?: Logger;
  /** Clock; default () => new Date(). */
  now?: () => Date;
  /** Budget rules the scheduler obeys (coordinator/billing/budget-guard.ts); default none. */
  budget?: AssignmentBudget;
}

type CompiledOptions = Required<Omit<CellLinkServerOptions, "credentials" | "budget">> & { credentials: ServerCredentials; budget?: AssignmentBudget };

const OPTION_KEYS = [
  "db", "runsRepo", "runEvents", "pins", "artifactsDir", "baseUrl", "streamsUrl", "host", "port", "credentials",
  "metricsRegistry", "heartbeatIntervalMs", "heartbeatTimeoutMs", "schedulerIntervalMs", "logger", "now", "budget",
] as const;

/** Fills defaults and rejects unknown or missing options. */
export function compileCellLinkOptions(options: CellLinkServerOptions): CompiledOptions {
  const unknown = Object.keys(options).filter((k) => !(OPTION_KEYS as readonly string[]).includes(k));
  if (unknown.length) throw new Error(`unknown CellLink server option(s): ${unknown.join(", ")}; known: ${OPTION_KEYS.join(", ")}`);
  for (const key of ["db", "runsRepo", "runEvents", "pins", "artifactsDir", "baseUrl", "streamsUrl"] as const) {
    if (options[key] === undefined) throw new Error(`CellLink server option ${key} is required`);
  }
  const compiled: CompiledOptions = {
    host: "127.0.0.1",
    port: 0,
    credentials: ServerCredentials.createInsecure(),
    metricsRegistry: new Registry(),
    heartbeatIntervalMs: 1000,
    heartbeatTimeoutMs: 5000,
    schedulerIntervalMs: 1000,
    logger: console,
    now: () => new Date(),
    ...stripUndefined(options),
  } as CompiledOptions;
  for (const key of ["heartbeatIntervalMs", "heartbeatTimeoutMs", "schedulerIntervalMs"] as const) {
    if (!(compiled[key] > 0)) throw new Error(`CellLink server option ${key} must be a positive number of milliseconds; got ${compiled[key]}`);
  }
  if (compiled.heartbeatTimeoutMs <= compiled.heartbeatIntervalMs) {
    throw new Error(`heartbeatTimeoutMs (${compiled.heartbeatTimeoutMs}) must exceed heartbeatIntervalMs (${compiled.heartbeatIntervalMs})`);
  }
  compiled.baseUrl = compiled.baseUrl.replace(/\/+$/, "");
  compiled.streamsUrl = compiled.streamsUrl.replace(/\/+$/, "");
  return compiled;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export interface CellLinkServerHandle {
  /** The port actually bound. */
  port: number;
  /** Live fleet for the API (GET /v1/robots duty cycles, streams). */
  fleet: FleetView;
  /** The registry itself (tests, and later: holds and e-stop halts). */
  registry: CellRegistry;
  /** Kick after creating a run so it is scheduled without waiting for the periodic pass. */
  scheduler: Scheduler;
  completer: RunCompleter;
  /** Cuts a cell's stream now (e.g. right after revokeCell); its held episode is requeued. */
  disconnect(cellId: string, message: string): void;
  /** Stops scheduling, closes every stream and shuts the server down. */
  stop(): Promise<void>;
}

export async function startCellLinkServer(options: CellLinkServerOptions): Promise<CellLinkServerHandle> {
  const o = compileCellLinkOptions(options);
  const clockMs = () => o.now().getTime();
  const registry = new CellRegistry({ pins: o.pins, now: clockMs });
  const metrics = createFleetMetrics(o.metricsRegistry);
  const completer = createRunCompleter({ db: o.db, runsRepo: o.runsRepo, runEvents: o.runEvents, pins: o.pins, baseUrl: o.baseUrl });
  const scheduler = createScheduler({
    db: o.db, registry, runEvents: o.runEvents, runsRepo: o.runsRepo, streamsUrl: o.streamsUrl, metrics, logger: o.logger,
    intervalMs: o.schedulerIntervalMs, now: o.now, budget: o.budget,
  });
  const ctx: LinkContext = {
    db: o.db, registry, scheduler, completer, runsRepo: o.runsRepo, runEvents: o.runEvents, store: new ArtifactStore(o.artifactsDir),
    metrics, streamsUrl: o.streamsUrl, heartbeatIntervalMs: o.heartbeatIntervalMs, logger: o.logger, now: o.now, stopping: false,
  };

  const implementation: CellLinkServer = {
    connect: (call) => handleConnect(ctx, call),
    artifactStatus: (call, callback) => handleArtifactStatus(ctx, call, callback),
    uploadArtifact: (call, callback) => handleUploadArtifact(ctx, call, callback),
  };
  const server = new Server();
  server.addService(CellLinkService, implementation);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${o.host}:${o.port}`, o.credentials, (error, bound) => (error ? reject(error) : resolve(bound)));
  });

  const startedAtMs = clockMs();
  const watchdog = setInterval(() => {
    try {
      for (const session of registry.silentSessions(o.heartbeatTimeoutMs)) {
        o.logger.warn(`cell ${session.cellId}: silent for more than ${o.heartbeatTimeoutMs} ms; treating it as disconnected`);
        session.close(new LinkError("heartbeat_timeout", `no message for ${o.heartbeatTimeoutMs} ms; reconnect`));
      }
      // Episodes held by cells that have not come back since this coordinator started (a
      // disconnect while running requeues at once, so only a restart leaves such orphans).
      if (clockMs() - startedAtMs > o.heartbeatTimeoutMs) {
        for (const cellId of new Set(listHeldEpisodes(o.db).map((e) => e.cell_id))) {
          if (cellId && !registry.session(cellId)) requeueHeldBy(ctx, cellId, "link_lost", `cell ${cellId} has not reconnected since the coordinator started`);
        }
      }
    } catch (error) {
      o.logger.error(`CellLink watchdog failed: ${(error as Error).stack ?? error}`);
    }
  }, Math.min(1000, o.heartbeatIntervalMs));
  watchdog.unref();
  scheduler.start();
  o.logger.info(`CellLink listening on ${o.host}:${port}`);

  return {
    port,
    fleet: registry,
    registry,
    scheduler,
    completer,
    disconnect(cellId, message) {
      registry.session(cellId)?.close(new LinkError("cell_revoked", message));
    },
    async stop() {
      ctx.stopping = true;
      scheduler.stop();
      clearInterval(watchdog);
      for (const session of registry.sessions()) session.close(new LinkError("shutting_down", "the coordinator is shutting down; reconnect later"));
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
  };
}
