/**
 * The options of the fleet side (registry, lifecycle, scheduler, CellLink server): one object,
 * compiled once with defaults filled in, unknown keys rejected and durations in milliseconds.
 */
import { ServerCredentials } from "@grpc/grpc-js";
import { Registry } from "prom-client";
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import type { RunEvents } from "../runs/run-events.js";
import type { ObjectStore } from "../storage/object-store.js";
import type { RunRecord } from "../store/runs-repo.js";
import type { Logger } from "../scheduler/scheduler.js";
import type { Db } from "../store/database.js";
import type { ClusterBus } from "../cluster/cluster-bus.js";
import { CATALOG_ACCOUNT_ID } from "../tasks/task-catalog.js";
import { DEFAULT_ATTENTION_PAGE_MS } from "./attention-pager.js";
import { DEFAULT_RECORDING_WAIT_MS } from "../runs/recording-wait.js";
import { RUN_COMPLETION_SWEEP_MS } from "./run-completion.js";

export interface FleetOptions {
  /** The coordinator's store. */
  db: Db;
  runEvents: RunEvents;
  /** Catalog and installations (firmware check, tier for pricing). */
  pins: FirmwarePins;
  /** The artifact store: cells' uploads become `<run>/<episode>/<file>` in it, models are read from it. */
  objects: ObjectStore;
  /** Public base URL of the API without /v1, for the Result's links. */
  baseUrl: string;
  /** Base of live stream URLs; status events carry `${streamsUrl}/cells/<cell>`. */
  streamsUrl: string;
  /** CellLink listen host; default "127.0.0.1". */
  host?: string;
  /** CellLink listen port; default 0 (any free port, reported back). */
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
  /** Run after every run ending commits (e.g. the webhook worker's kick); default none. */
  endedHooks?: ReadonlyArray<(run: RunRecord) => void>;
  /** A cell waiting on a person this long raises cell.attention_needed (coordinator/fleet/attention-pager.ts); default 120000. */
  attentionPageMs?: number;
  /** The account whose webhook endpoints receive cell.attention_needed: the operator account. Default the catalog/operator account. */
  operatorAccountId?: string;
  /** Run after the fleet queues a webhook event of its own (e.g. the webhook worker's kick); default none. */
  outboxHooks?: ReadonlyArray<() => void>;
  /** Several coordinators on one PostgreSQL database: this one's id and the bus between them. Default none. */
  cluster?: { coordinatorId: string; bus: ClusterBus };
  /** How long a run whose episodes have all finished waits for recordings not uploaded (runs/recording-wait.ts); default 6 h. */
  recordingWaitMs?: number;
  /** Time between two looks of the run-completion sweep (run-completion.ts); default 10000. */
  runCompletionSweepMs?: number;
}

export type CompiledFleetOptions = Required<Omit<FleetOptions, "cluster">> & Pick<FleetOptions, "cluster">;

const OPTION_KEYS = [
  "db", "runEvents", "pins", "objects", "baseUrl", "streamsUrl", "host", "port", "credentials",
  "metricsRegistry", "heartbeatIntervalMs", "heartbeatTimeoutMs", "schedulerIntervalMs", "logger", "now", "endedHooks", "cluster",
  "attentionPageMs", "operatorAccountId", "outboxHooks", "recordingWaitMs", "runCompletionSweepMs",
] as const;

/** Fills defaults and rejects unknown or missing options. */
export function compileFleetOptions(options: FleetOptions): CompiledFleetOptions {
  const unknown = Object.keys(options).filter((k) => !(OPTION_KEYS as readonly string[]).includes(k));
  if (unknown.length) throw new Error(`unknown fleet option(s): ${unknown.join(", ")}; known: ${OPTION_KEYS.join(", ")}`);
  for (const key of ["db", "runEvents", "pins", "objects", "baseUrl", "streamsUrl"] as const) {
    if (options[key] === undefined) throw new Error(`fleet option ${key} is required`);
  }
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<FleetOptions>;
  const compiled: CompiledFleetOptions = {
    host: "127.0.0.1",
    port: 0,
    credentials: ServerCredentials.createInsecure(),
    metricsRegistry: new Registry(),
    heartbeatIntervalMs: 1000,
    heartbeatTimeoutMs: 5000,
    schedulerIntervalMs: 1000,
    logger: console,
    now: () => new Date(),
    endedHooks: [],
    attentionPageMs: DEFAULT_ATTENTION_PAGE_MS,
    operatorAccountId: CATALOG_ACCOUNT_ID,
    outboxHooks: [],
    recordingWaitMs: DEFAULT_RECORDING_WAIT_MS,
    runCompletionSweepMs: RUN_COMPLETION_SWEEP_MS,
    ...defined,
  } as CompiledFleetOptions;
  for (const key of ["heartbeatIntervalMs", "heartbeatTimeoutMs", "schedulerIntervalMs", "attentionPageMs", "recordingWaitMs", "runCompletionSweepMs"] as const) {
    if (!(compiled[key] > 0)) throw new Error(`fleet option ${key} must be a positive number of milliseconds; got ${compiled[key]}`);
  }
  if (compiled.heartbeatTimeoutMs <= compiled.heartbeatIntervalMs) {
    throw new Error(`heartbeatTimeoutMs (${compiled.heartbeatTimeoutMs}) must exceed heartbeatIntervalMs (${compiled.heartbeatIntervalMs})`);
  }
  compiled.baseUrl = compiled.baseUrl.replace(/\/+$/, "");
  compiled.streamsUrl = compiled.streamsUrl.replace(/\/+$/, "");
  return compiled;
}
