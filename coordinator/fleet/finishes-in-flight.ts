/**
 * The finishes of each run one coordinator is applying without the run's lock (fleet/episode-messages.ts). A finish
 * enters before its transaction commits and leaves once its events are published; the one that leaves last asks for
 * the run's completion (run-completion.ts), so the run's `status` event follows every `episode` event of this
 * coordinator's finishes.
 */
/** The finishes of each run this coordinator is applying without the run's lock. */
export class FinishesInFlight {
  private readonly counts = new Map<string, number>();

  /** A finish of the run is under way here (call before its transaction commits). */
  enter(runId: string): void {
    this.counts.set(runId, (this.counts.get(runId) ?? 0) + 1);
  }

  /** That finish is over (committed and published, or failed); true when no other finish of the run is under way here. */
  leave(runId: string): boolean {
    const left = (this.counts.get(runId) ?? 1) - 1;
    if (left > 0) {
      this.counts.set(runId, left);
      return false;
    }
    this.counts.delete(runId);
    return true;
  }

  /** Whether a finish of the run is under way here. */
  has(runId: string): boolean {
    return this.counts.has(runId);
  }
}

