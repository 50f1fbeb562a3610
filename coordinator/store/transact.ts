/**
 * Transactions with effects after the commit. `transact(db, fn)` runs `fn` in a transaction (a
 * savepoint when nested); `afterCommit(db, effect)` inside it queues an effect (an SSE event, a
 * message to a cell, a worker kick) that runs once the outermost transaction has committed, and
 * is dropped if it rolls back. So nothing is announced that the store does not hold, however deep
 * the call that decided it.
 */
import type { Db } from "./database.js";

type Effect = () => void;

/** Open transact() frames per database, innermost last; each holds the effects queued in it. */
const frames = new WeakMap<Db, Effect[][]>();

/** Runs `fn` in a transaction; effects queued inside run after the outermost commit, in order. */
export function transact<T>(db: Db, fn: () => T): T {
  let stack = frames.get(db);
  if (!stack) frames.set(db, (stack = []));
  stack.push([]);
  let result: T;
  try {
    result = db.transaction(fn)();
  } catch (error) {
    stack.pop();
    throw error;
  }
  const effects = stack.pop()!;
  if (stack.length > 0) {
    // A savepoint committed inside an outer transaction: its effects wait for the outer commit.
    stack[stack.length - 1].push(...effects);
    return result;
  }
  for (const effect of effects) effect();
  return result;
}

/**
 * Queues `effect` to run after the commit of the enclosing `transact`; runs it now when no
 * transaction is open. NOTE: a transaction opened with `db.transaction` directly cannot carry
 * effects; open it with `transact`, or this throws rather than announce an uncommitted change.
 */
export function afterCommit(db: Db, effect: Effect): void {
  const stack = frames.get(db);
  if (stack && stack.length > 0) stack[stack.length - 1].push(effect);
  else if (db.inTransaction) throw new Error("afterCommit inside a transaction not opened with transact(); open it with transact()");
  else effect();
}
