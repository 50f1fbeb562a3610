/**
 * What this coordinator shows of the runs waiting for recordings (runs/recording-wait.ts): each run's status_detail
 * while it waits, the /metrics gauges, and one log line per run. Refreshed by every look of the run-completion sweep
 * (run-completion.ts) from the store, so every coordinator sharing a database shows the same waits, and a restart
 * shows them again after one look; the decision to stop waiting is the lifecycle's, under the run's lock.
 */
import type { FleetMetrics } from "../cells/fleet-metrics.js";
import type { PendingArtifactsOfCell } from "../store/artifacts-repo.js";
import { recordingWaitEndsAt, recordingWaitMessage } from "../runs/recording-wait.js";

/** One run's wait as the last look saw it. */
export interface RecordingWait {
  runId: string;
  pending: PendingArtifactsOfCell[];
  /** When the run completes without them, unless they arrive. */
  endsAt: Date;
  /** The run's status_detail message while it waits. */
  message: string;
}

export interface RecordingWaitsOptions {
  waitMs: number;
  logger: { info(message: string): void };
  /** The /metrics gauges it sets; default none. */
  metrics?: Pick<FleetMetrics, "runsWaitingForRecordings" | "recordingsAwaited">;
}

export class RecordingWaits {
  private waits = new Map<string, RecordingWait>();
  /** Runs already logged as waiting (forgotten once they stop waiting). */
  private readonly logged = new Set<string>();

  constructor(private readonly options: RecordingWaitsOptions) {}

  /** The status_detail message of a run waiting for recordings, as of the sweep's last look; undefined otherwise. */
  reason(runId: string): string | undefined {
    return this.waits.get(runId)?.message;
  }

  list(): RecordingWait[] {
    return [...this.waits.values()];
  }

  /**
   * Replaces the view with one look's waiting runs (run id -> its pending recordings per cell). `confirmed`: the runs
   * seen waiting on the look before too; each is logged the first time (a run whose uploads are merely in flight at
   * one look is not).
   */
  update(waiting: ReadonlyMap<string, PendingArtifactsOfCell[]>, confirmed: ReadonlySet<string>): void {
    const next = new Map<string, RecordingWait>();
    for (const [runId, pending] of waiting) {
      const endsAt = recordingWaitEndsAt(pending, this.options.waitMs);
      const wait = { runId, pending, endsAt, message: recordingWaitMessage(pending, endsAt) };
      next.set(runId, wait);
      if (confirmed.has(runId) && !this.logged.has(runId)) {
        this.logged.add(runId);
        this.options.logger.info(`run ${runId}: ${wait.message}`);
      }
    }
    for (const runId of this.logged) if (!next.has(runId)) this.logged.delete(runId);
    this.waits = next;
    const gauges = this.options.metrics;
    if (!gauges) return;
    gauges.runsWaitingForRecordings.set(next.size);
    const byCell = new Map<string, number>();
    for (const wait of next.values()) {
      for (const cell of wait.pending) byCell.set(cell.cellId ?? "", (byCell.get(cell.cellId ?? "") ?? 0) + cell.artifacts);
    }
    gauges.recordingsAwaited.reset();
    for (const [cell, n] of byCell) gauges.recordingsAwaited.set({ cell }, n);
  }
}
