/**
 * Finishing the creation of large runs, and keeping heavy submissions from stalling the event loop.
 *
 * A run commits with its first episodes (store: runs-repo.ts insertRun); the rest are inserted a
 * step of `episodesPerStep` at a time (runs-repo.ts backfillEpisodes). Every step, and every
 * submission's validation and first insert, waits for a turn: this coordinator grants one turn per
 * event-loop iteration, first come first served, so eight 10,000-episode runs submitted at once
 * take turns with each other and timers, sockets and other requests run between any two steps (the
 * loop is never held for more than one step). The submission awaits its backfill before answering
 * 201; at start-up the coordinator resumes any creation a crash or stop cut short, so an accepted
 * run always gets all its episodes.
 */
import type { Db } from "../store/database.js";
import { backfillEpisodes, runsBackfilling, type Backfill } from "../store/runs-repo.js";

/** Episodes inserted per backfill step: about a millisecond of work on SQLite. */
export const BACKFILL_EPISODES_PER_STEP = 200;

export interface RunBackfillOptions {
  db: Db;
  /** Episodes inserted per step (one transaction, one loop turn). Default BACKFILL_EPISODES_PER_STEP. */
  episodesPerStep?: number;
}

export interface RunBackfill {
  /**
   * Resolves at this coordinator's next free turn (one per event-loop iteration, in request order).
   * NOTE: do the heavy synchronous work right after it resolves, before awaiting anything else.
   */
  turn(): Promise<void>;
  /** Inserts the rest of a run's episodes, a step per turn; resolves once none is left. */
  complete(runId: string): Promise<void>;
  /** Completes every creation a stop or crash cut short; returns those runs. */
  resume(): Promise<string[]>;
}

export function createRunBackfill(options: RunBackfillOptions): RunBackfill {
  const { db } = options;
  const episodesPerStep = options.episodesPerStep ?? BACKFILL_EPISODES_PER_STEP;
  if (!Number.isInteger(episodesPerStep) || episodesPerStep < 1) throw new Error(`episodesPerStep must be a positive integer; got ${episodesPerStep}`);
  const waiting: Array<() => void> = [];
  let scheduled = false;
  /** Runs being completed here -> their remaining episodes, parsed once. */
  const parsed = new Map<string, Backfill>();

  // One waiter per iteration: an immediate queued from an immediate runs on the next iteration,
  // after that iteration's timers and I/O.
  const release = () => {
    scheduled = false;
    waiting.shift()?.();
    if (waiting.length > 0) schedule();
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(release);
  };
  const turn = () => new Promise<void>((resolve) => {
    waiting.push(resolve);
    schedule();
  });
  const complete = async (runId: string) => {
    try {
      do await turn();
      while (await backfillEpisodes(db, runId, episodesPerStep, parsed));
    } finally {
      parsed.delete(runId);
    }
  };
  return {
    turn,
    complete,
    async resume() {
      const runs = await runsBackfilling(db);
      await Promise.all(runs.map(complete));
      return runs;
    },
  };
}
