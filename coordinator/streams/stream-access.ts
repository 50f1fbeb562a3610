/**
 * Who may watch a cell. Operators (the operator account's keys) watch every cell. A customer
 * watches a cell only while it runs the customer's work: the episode the coordinator has assigned
 * to the cell belongs to one of the account's runs (a pilot included). Anything else answers as if
 * the cell did not exist (404), so a customer cannot learn what other customers run, or where.
 */
import { resolveBearer } from "../auth/authenticate.js";
import { AssayError } from "../errors/assay-error.js";
import type { FleetView } from "../fleet/fleet-view.js";
import { checkStreamToken } from "./stream-tokens.js";
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

/**
 * The account a stream connection acts for: its URL token's (checked for `target`, a cell id or a
 * run's target), else its bearer key's, which needs streams:read. Throws 401 or 403.
 */
export function streamViewerAccount(db: Db, target: string, token: string | undefined, authorization: string | undefined, now: Date): string {
  if (token !== undefined) {
    const check = checkStreamToken(db, token, target, now);
    if (!check.ok) throw new AssayError("invalid_api_key", check.reason);
    return check.grant.accountId;
  }
  const key = resolveBearer(db, authorization);
  if (!key.scope.includes("streams:read")) throw new AssayError("insufficient_scope", "watching a stream needs a key with streams:read (or the token in a descriptor's URL)");
  return key.accountId;
}
