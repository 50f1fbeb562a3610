/**
 * Who may watch a cell. Operators (the operator account's keys) watch every cell. A customer
 * watches a cell only while it runs the customer's work: the episode the coordinator has assigned
 * to the cell belongs to one of the account's runs (a pilot included). Anything else answers as if
 * the cell did not exist (404), so a customer cannot learn what other customers run, or where.
 */
import type { FleetView } from "../fleet/fleet-view.js";
import { getEpisode } from "../store/episodes-repo.js";
import type { Db } from "../store/database.js";
import { getRun } from "../store/runs-repo.js";

export interface CellWork {
  runId: string;
  accountId: string;
  episodeId: string;
  index: number;
}

/** The run and episode the cell is on now, if any. */
export function workOfCell(db: Db, fleet: FleetView, cellId: string): CellWork | null {
  const episodeId = fleet.assignedEpisodeOf(cellId);
  if (!episodeId) return null;
  const episode = getEpisode(db, episodeId);
  const run = episode ? getRun(db, episode.run_id) : undefined;
  return episode && run ? { runId: run.id, accountId: run.accountId, episodeId, index: episode.idx } : null;
}

export function mayWatch(db: Db, fleet: FleetView, operatorAccountId: string, accountId: string, cellId: string): boolean {
  if (accountId === operatorAccountId) return true;
  return workOfCell(db, fleet, cellId)?.accountId === accountId;
}
