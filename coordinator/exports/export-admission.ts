/**
 * What an account may queue for the archive worker (run and calibration exports together):
 * - a request identical to an export the account already has preparing, or ready and available, is
 *   answered with that export (200) instead of a new copy;
 * - at most `queuedPerAccount` archives of one account are preparing (queued or being made) at
 *   once; one more is refused 429 rate_limited with Retry-After.
 * Both checks and the insert run in one transaction under a lock on the account's queue, so
 * coordinators sharing a PostgreSQL store admit no duplicate and no archive past the limit.
 *
 * The request's own validation (which reads the run a page at a time: seconds for 10,000 episodes)
 * runs between two such transactions, in none: a transaction held open across its pages would keep a
 * PostgreSQL connection (and the queue's lock) or SQLite's one connection from everyone else that long.
 * The checks run before it (an identical export or a full queue answers as it always did, without
 * validating) and again with the insert, so what is admitted is still decided under the lock. What the
 * validation read may have changed by the insert (a purge meanwhile): the worker checks again.
 */
import { AssayError } from "../errors/assay-error.js";
import type { Db } from "../store/database.js";
import { countPreparingArchives } from "../store/exports-repo.js";
import { lockName } from "../store/named-lock.js";
import { transact, type Tx } from "../store/tx.js";

/** Archives one account may have preparing at once, by default (coordinator option exports.queuedPerAccount). */
export const DEFAULT_EXPORTS_QUEUED_PER_ACCOUNT = 4;

/** Seconds a refused request is told to wait: about what a small export takes behind a busy queue. */
const RETRY_AFTER_S = 30;

export interface ArchiveAdmission<T> {
  row: T;
  /** True when an identical export already existed: nothing was queued. */
  reused: boolean;
}

/**
 * Admits one archive request of `accountId`: `existing(tx)` finds an identical export to answer
 * with; otherwise, room permitting, `validate()` checks the request (outside any transaction; it
 * throws the request's error) and `insert(tx, valid)` records a new one in the admission's
 * transaction, `tx`, after the checks are made again.
 */
export async function admitArchive<T, V>(
  db: Db, accountId: string, queuedPerAccount: number,
  steps: { existing: (tx: Tx) => Promise<T | undefined>; validate: () => Promise<V>; insert: (tx: Tx, valid: V) => Promise<T> },
): Promise<ArchiveAdmission<T>> {
  /** The answer without a new export (reused), undefined when there is room for one; throws 429 when the queue is full. */
  const check = async (tx: Tx): Promise<ArchiveAdmission<T> | undefined> => {
    await lockName(tx, `archive-queue:${accountId}`);
    const existing = await steps.existing(tx);
    if (existing !== undefined) return { row: existing, reused: true };
    const preparing = await countPreparingArchives(tx, accountId);
    if (preparing >= queuedPerAccount) {
      throw new AssayError(
        "rate_limited",
        `this account already has ${preparing} exports queued or being made (run and calibration exports together), the most allowed at once is ${queuedPerAccount}; wait until one is ready (poll GET /v1/exports/{export_id} or /v1/calibration/exports/{id}) and retry after ${RETRY_AFTER_S} s`,
        { retryAfterS: RETRY_AFTER_S },
      );
    }
    return undefined;
  };
  const answered = await transact(db, check);
  if (answered) return answered;
  const valid = await steps.validate();
  return await transact(db, async (tx) => (await check(tx)) ?? { row: await steps.insert(tx, valid), reused: false });
}
