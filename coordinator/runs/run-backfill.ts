/**
 * Finishing the creation of large runs: their episodes beyond the first transaction are inserted a
 * transaction at a time, yielding to the event loop between them (store: runs-repo.ts
 * backfillEpisodes). The submission awaits it before answering 201; at start-up the coordinator
 * resumes any creation a crash or stop cut short, so an accepted run always gets all its episodes.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Db } from "../store/database.js";
import { backfillEpisodes, runsBackfilling } from "../store/runs-repo.js";

export async function completeBackfill(db: Db, runId: string): Promise<void> {
  while (backfillEpisodes(db, runId)) await nextTurn();
}

/** Resumes every unfinished backfill; returns the runs it completed. */
export async function resumeBackfills(db: Db): Promise<string[]> {
  const runs = runsBackfilling(db);
  for (const runId of runs) await completeBackfill(db, runId);
  return runs;
}
