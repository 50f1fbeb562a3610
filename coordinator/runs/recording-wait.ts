/**
 * The bounded wait for recordings (docs/storage.md, "A bounded wait for recordings"). A run whose episodes have all
 * finished completes once every recording its cells announced is stored, or, at the latest, once the newest of those
 * still pending has waited `recordingWaitMs` since its episode finished: then it completes without them, and they are
 * recorded missing (still taken if their cell uploads them later). Pure: the lifecycle decides under the run's lock
 * (lifecycle/run-lifecycle.ts), the completion sweep shows the wait (fleet/recording-waits.ts), both with these words.
 */
import type { PendingArtifactsOfCell } from "../store/artifacts-repo.js";

/** How long a run waits for its recordings after its last episode that announced one finished, unless configured: 6 h. */
export const DEFAULT_RECORDING_WAIT_MS = 6 * 3_600_000;

/** A pending recording whose episode finished longer ago than this is counted overdue on /metrics: 15 min. */
export const RECORDING_OVERDUE_MS = 15 * 60_000;

/**
 * When the run stops waiting: `waitMs` after the newest pending recording's episode finished. An episode with no
 * finish time (not expected: EpisodeFinished announces the recordings and sets it) does not hold the run.
 */
export function recordingWaitEndsAt(pending: readonly PendingArtifactsOfCell[], waitMs: number): Date {
  let newestMs = 0;
  for (const cell of pending) {
    const finishedMs = cell.newestFinishedAt ? Date.parse(cell.newestFinishedAt) : Number.NaN;
    if (Number.isFinite(finishedMs)) newestMs = Math.max(newestMs, finishedMs);
  }
  return new Date(newestMs + waitMs);
}

/** Whether a run with these pending recordings (at least one) has waited long enough to complete without them. */
export function recordingWaitOver(pending: readonly PendingArtifactsOfCell[], now: Date, waitMs: number): boolean {
  return pending.length > 0 && now.getTime() >= recordingWaitEndsAt(pending, waitMs).getTime();
}

function recordings(n: number): string {
  return n === 1 ? "1 recording" : `${n} recordings`;
}

function cellName(cell: PendingArtifactsOfCell): string {
  return cell.cellId ?? "an unknown cell";
}

/** What a waiting run's status_detail says: who holds how many, since when, until when, and what to do. */
export function recordingWaitMessage(pending: readonly PendingArtifactsOfCell[], endsAt: Date): string {
  const held = pending.map((cell) => `${recordings(cell.artifacts)} from cell ${cellName(cell)} (pending since ${cell.oldestFinishedAt ?? "unknown"})`);
  return `every episode finished; waiting for ${held.join(", ")} not uploaded yet. ` +
    `The run completes without them at ${endsAt.toISOString()}; to get them, start the cell's agent or restore its link or disk (it uploads on reconnecting)`;
}

/**
 * The coordinator's log line when a run completes without recordings: the wait (`waitMs`) was over, or a person
 * (`by`, e.g. "key key_123") stopped it.
 */
export function recordingsMissingMessage(runId: string, pending: readonly PendingArtifactsOfCell[], why: { waitMs: number } | { by: string }): string {
  const held = pending.map((cell) => `${recordings(cell.artifacts)} from cell ${cellName(cell)}`);
  const because = "waitMs" in why ? `not uploaded within ${formatWait(why.waitMs)} of their episode's finish (recordingWaitMs)` : `the wait was stopped on request (${why.by})`;
  return `run ${runId}: completed without ${held.join(", ")}: ${because}; they are recorded missing and still taken if the cell uploads them later`;
}

/** A wait as people say it: "6 h", "90 min", "45 s", "250 ms". */
export function formatWait(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 100) / 10} s`;
}
