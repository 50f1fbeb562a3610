/**
 * Who may watch a cell. Operators (the operator account's keys) watch every cell. A customer
 * watches a cell only while it runs the customer's work: the episode the coordinator has assigned
 * to the cell belongs to one of the account's runs (a pilot included). Anything else answers as if
 * the cell did not exist (404), so a customer cannot learn what other customers run, or where.
 *
 * A live view is admitted with a ViewerGrant (the account, key and, for a customer, the run it was
 * admitted for) and holds only while `grantLapse()` finds nothing wrong with it: the watch in
 * live-access-watch.ts asks again whenever a cell's assignment or a run's status changes.
 */
import type { ApiKeyCache } from "../auth/api-key-cache.js";
import { resolveBearer, type RejectedKeyGuard } from "../auth/authenticate.js";
import { AssayError } from "../errors/assay-error.js";
import type { FleetView } from "../cells/fleet-view.js";
import { isTerminal, type RunStatus } from "../domain/run-state.js";
import { checkStreamToken, STREAM_SCOPE } from "../auth/stream-tokens.js";
import { getEpisode } from "../store/episodes-repo.js";
import type { Db } from "../store/database.js";
import { findKeyById } from "../store/keys-repo.js";
import { getRun, getRunRow } from "../store/runs-repo.js";

export interface CellWork {
  runId: string;
  accountId: string;
  episodeId: string;
  index: number;
}

/** The run and episode the cell is on now, if any. */
export async function workOfCell(db: Db, fleet: FleetView, cellId: string): Promise<CellWork | null> {
  const episodeId = fleet.assignedEpisodeOf(cellId);
  if (!episodeId) return null;
  const episode = await getEpisode(db, episodeId);
  const run = episode ? await getRun(db, episode.run_id) : undefined;
  return episode && run ? { runId: run.id, accountId: run.accountId, episodeId, index: episode.idx } : null;
}

/** What admitted a live view, and so what must go on holding for it to stay open. */
export interface ViewerGrant {
  cellId: string;
  accountId: string;
  /** The key that opened the view, or that the URL's token was minted for. */
  keyId: string;
  /** A customer's view: the run on the cell when it was admitted. Operators: null (every cell, any run). */
  runId: string | null;
  /** A token-admitted view: when its token expires. */
  tokenExpiresAt: Date | null;
}

/** Who a stream connection acts for: from its URL token, or else its bearer key. */
export interface StreamViewer {
  accountId: string;
  keyId: string;
  /** The run a token was minted for (it admits to that run's cell only), if any. */
  tokenRunId: string | null;
  tokenExpiresAt: Date | null;
}

/** What a stream request presents: a stream token (from a descriptor's URL) or else a bearer key. */
export interface StreamCredentials {
  token?: string;
  authorization?: string;
  /** The coordinator's verified keys (a bearer key it has seen is not read from the store again). Default: the store. */
  keys?: ApiKeyCache;
  /** Bad bearer keys per client address. Default none. */
  guard?: RejectedKeyGuard;
}

/**
 * The account a stream connection acts for: its URL token's (checked for `target`, a cell id or a
 * run's target, for the streams:read scope, and for its key: still valid and holding streams:read),
 * else its bearer key's, which needs streams:read. Throws 401 or 403.
 */
export async function streamViewer(db: Db, target: string, credentials: StreamCredentials, now: Date): Promise<StreamViewer> {
  const { token, authorization, keys, guard } = credentials;
  if (token !== undefined) {
    const check = await checkStreamToken(db, token, target, now);
    if (!check.ok) throw new AssayError("invalid_api_key", check.reason);
    const { grant } = check;
    if (!grant.keyId) throw new AssayError("invalid_api_key", "the stream token names no API key; take a fresh URL from GET /v1/streams/{cell} (or your run's events) with a key that holds streams:read");
    const key = await findKeyById(db, grant.keyId);
    if (!key || key.account_id !== grant.accountId) throw new AssayError("invalid_api_key", "the stream token's key does not exist; take a fresh URL");
    if (key.revoked) throw new AssayError("invalid_api_key", `the stream token's key ${key.id} was revoked at ${key.revoked}`);
    if (!(JSON.parse(key.scope) as string[]).includes(STREAM_SCOPE)) {
      throw new AssayError("insufficient_scope", `the stream token's key ${key.id} does not hold ${STREAM_SCOPE}; watching needs a key with ${STREAM_SCOPE}`);
    }
    return { accountId: grant.accountId, keyId: grant.keyId, tokenRunId: grant.runId ?? null, tokenExpiresAt: grant.expiresAt };
  }
  const key = await resolveBearer(keys ?? db, authorization, guard);
  if (!key.scope.includes(STREAM_SCOPE)) throw new AssayError("insufficient_scope", "watching a stream needs a key with streams:read (or the token in a descriptor's URL)");
  return { accountId: key.accountId, keyId: key.keyId, tokenRunId: null, tokenExpiresAt: null };
}

/**
 * The grant for `viewer` to watch `cellId` now, or null when it may not (answer 404 then): operators
 * any cell; a customer the cell while it runs the account's work (and, with a run's token, that run).
 */
export async function admitViewer(db: Db, fleet: FleetView, operatorAccountId: string, viewer: StreamViewer, cellId: string): Promise<ViewerGrant | null> {
  const base = { cellId, accountId: viewer.accountId, keyId: viewer.keyId, tokenExpiresAt: viewer.tokenExpiresAt };
  if (viewer.accountId === operatorAccountId) return { ...base, runId: null };
  const work = await workOfCell(db, fleet, cellId);
  if (!work || work.accountId !== viewer.accountId) return null;
  if (viewer.tokenRunId !== null && work.runId !== viewer.tokenRunId) return null;
  return { ...base, runId: work.runId };
}

/**
 * Why `grant` no longer holds, in words fit for a close reason (at most ~100 characters), or null
 * while it does: the token expired, the key was revoked, the run ended, or the cell moved on to
 * another run. Between two episodes of the run the grant holds.
 */
export async function grantLapse(db: Db, fleet: FleetView, grant: ViewerGrant, now: Date): Promise<string | null> {
  if (grant.tokenExpiresAt && grant.tokenExpiresAt.getTime() <= now.getTime()) return "stream token expired; take a fresh URL";
  const key = await findKeyById(db, grant.keyId);
  if (!key || key.revoked) return `API key ${grant.keyId} was revoked`;
  if (grant.runId === null) return null;
  const run = await getRunRow(db, grant.runId);
  if (!run || isTerminal(run.status as RunStatus)) return `run ${grant.runId} ended`;
  const work = await workOfCell(db, fleet, grant.cellId);
  if (work && work.runId !== grant.runId) return "the cell moved on to another run";
  return null;
}
