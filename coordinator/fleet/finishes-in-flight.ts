/**
 * The finishes of each run one coordinator is applying without the run's lock (fleet/episode-messages.ts). A finish
 * enters before its transaction commits and leaves once its events are published; the one that leaves last asks for
 * the run's completion (run-completion.ts), so the run's `status` event follows every `episode` event of this
 * coordinator's finishes.
 */
/** Runs remembered as taking the run's lock (`FinishesInFlight.rememberLocked`): a few hundred bytes each. */
const LOCKED_RUNS_KEPT = 4096;

/** The finishes of each run this coordinator is applying without the run's lock. */
export class FinishesInFlight {
  /** Per run: the finishes under way here, and whether one that committed left before the others (the question it owes). */
  private readonly runs = new Map<string, { count: number; owed: boolean }>();

  /** A finish of the run is under way here (call before its transaction commits). */
  enter(runId: string): void {
    const run = this.runs.get(runId);
    if (run) run.count += 1;
    else this.runs.set(runId, { count: 1, owed: false });
  }

  /**
   * That finish is over (committed and published, or failed); true when no other finish of the run is under way here
   * and the run's completion is to be asked: always after a finish that `committed` something (or may have), and
   * after one that did not only when a finish that did left while it was under way.
   */
  leave(runId: string, committed = true): boolean {
    const run = this.runs.get(runId);
    if (!run) return committed;
    run.count -= 1;
    if (run.count > 0) {
      run.owed ||= committed;
      return false;
    }
    this.runs.delete(runId);
    return committed || run.owed;
  }

  /** Whether a finish of the run is under way here. */
  has(runId: string): boolean {
    return this.runs.has(runId);
  }

  /**
   * Runs whose finishes take the run's lock whatever they hold (a kind with a `progress` hook), as this coordinator has
   * met them, the most recent `LOCKED_RUNS_KEPT`: a finish of one goes straight to the locked path, without the
   * one-statement finish and the unlocked read, which cannot apply to it and cost a round trip each. A run's kind never
   * changes, so a remembered run is never wrong; one not met yet here tries the lock-free path first, as before.
   */
  private readonly lockedRuns = new Set<string>();

  /** The run's kind has a `progress` hook: its finishes take the run's lock. */
  rememberLocked(runId: string): void {
    if (this.lockedRuns.has(runId)) return;
    if (this.lockedRuns.size >= LOCKED_RUNS_KEPT) this.lockedRuns.delete(this.lockedRuns.values().next().value!);
    this.lockedRuns.add(runId);
  }

  /** Whether the run's finishes are known to take the run's lock. */
  takesLock(runId: string): boolean {
    return this.lockedRuns.has(runId);
  }
}
