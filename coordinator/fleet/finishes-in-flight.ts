/**
 * The finishes of each run one coordinator is applying without the run's lock (fleet/episode-messages.ts). A finish
 * enters before its transaction commits and leaves once its events are published; the one that leaves last asks for
 * the run's completion (run-completion.ts), so the run's `status` event follows every `episode` event of this
 * coordinator's finishes.
 */
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
}
