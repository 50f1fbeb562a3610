/** What the CellLink handlers share; built once by the composition root (coordinator/server.ts). */
import type { SerialQueue } from "../async/serial-queue.js";
import type { ArtifactStore } from "../artifacts/artifact-store.js";
import type { RunLifecycle } from "../lifecycle/run-lifecycle.js";
import type { RunEvents } from "../runs/run-events.js";
import type { Logger, Scheduler } from "../scheduler/scheduler.js";
import type { Db } from "../store/database.js";
import type { LiveHub } from "../streams/live-hub.js";
import type { FleetMetrics } from "../cells/fleet-metrics.js";
import type { CellRegistry } from "../cells/registry.js";
import type { ClusterLinks } from "../cluster/cluster-links.js";
import type { FinishesInFlight } from "./finishes-in-flight.js";
import type { RecordingWaits } from "./recording-waits.js";

export interface LinkContext {
  db: Db;
  registry: CellRegistry;
  scheduler: Scheduler;
  lifecycle: RunLifecycle;
  runEvents: RunEvents;
  store: ArtifactStore;
  metrics: FleetMetrics;
  streamsUrl: string;
  /** Live camera frames and state: LiveFeed calls feed it, viewers read it. */
  live: LiveHub;
  heartbeatIntervalMs: number;
  logger: Logger;
  now: () => Date;
  /** Set while the server shuts down: streams closing then do not requeue their episodes. */
  stopping: boolean;
  /** Present when several coordinators share the database (coordinator/cluster/). */
  cluster?: ClusterLinks;
  /** The message queue of each open Connect stream (connect-session.ts); the server's stop waits for them to drain. */
  messageQueues?: Set<SerialQueue>;
  /** The finishes of each run being applied here without the run's lock (run-completion.ts). */
  finishes: FinishesInFlight;
  /** What is shown of the runs waiting for recordings, refreshed by the run-completion sweep. Default none. */
  recordingWaits?: RecordingWaits;
}
