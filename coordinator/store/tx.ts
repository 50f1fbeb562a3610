/**
 * One transaction handle. `transact(db, (tx) => ...)` runs the function in a transaction and hands
 * it a `Tx`: the store's executor for that transaction (a `Tx` is a `Db`, so every repository
 * function takes it as it takes the database) that also carries the transaction's after-commit
 * effects (an SSE event, a message to a cell, a scheduler nudge, a webhook worker's kick):
 *
 *  - `tx.afterCommit(effect)` queues an effect; effects run in the order queued, once the outermost
 *    transaction has committed, and never when it rolls back. An effect that throws is logged and
 *    the others still run (the commit has happened; nothing can undo it).
 *  - `transact(tx, fn)` inside a transaction opens a savepoint with its own handle; its effects join
 *    the outer transaction's and run at the outer commit, or are dropped if the savepoint rolls back
 *    (so are effects queued on the outer handle meanwhile: their writes rolled back with it).
 *  - A repository's own `db.transaction(...)` called with a `Tx` nests as a savepoint the same way.
 *  - Once its transaction has ended, a handle refuses statements and effects (an effect that needs
 *    the store opens a new transaction with `transact(db, ...)` on the database, not on the old handle).
 *
 * So nothing is announced that the store does not hold, however deep the call that decided it, and
 * no state lives outside the handle (no module-level registry keyed by connection).
 *
 * Item 3 of issue 29 (an asynchronous store: a `pg` pool with one client per transaction on
 * PostgreSQL, better-sqlite3 behind the same async interface) changes this module, not the shape of
 * its callers: `transact(db, async (tx) => ...)` will take a client from the pool (BEGIN on it),
 * build the handle around that client, await `fn(tx)`, COMMIT and release the client, then run the
 * effects; `tx.prepare(...)` will go to that client while `db.prepare(...)` outside a transaction
 * goes to the pool. Callers already receive the handle and pass it down explicitly, which is what a
 * pool needs (the connection is no longer implied by the process); they will gain `async`/`await`
 * and nothing else. docs/store.md ("Transactions and their effects") says the same for readers.
 */
import type { Db, Dialect, Statement } from "./db.js";

/** Something to do once the transaction has committed. */
export type Effect = () => void;

/** Where a throwing effect is reported; default console. */
export interface TxLogger {
  error(message: string): void;
}

/** An open transaction on the store: usable wherever a `Db` is, plus its after-commit effects. */
export interface Tx extends Db {
  /** Queues `effect` to run after the outermost commit, in order; dropped on rollback. */
  afterCommit(effect: Effect): void;
}

export interface TransactOptions {
  /** Reports an effect that threw (the other effects still run). Default console. */
  logger?: TxLogger;
}

/** The effects of one outermost transaction, shared by its handle and its savepoints' handles. */
class EffectQueue {
  readonly effects: Effect[] = [];
  constructor(readonly logger: TxLogger) {}
}

class TxHandle implements Tx {
  private open = true;

  constructor(private readonly db: Db, private readonly queue: EffectQueue) {}

  get dialect(): Dialect {
    return this.db.dialect;
  }

  get inTransaction(): boolean {
    return this.open;
  }

  prepare(sql: string): Statement {
    this.check("prepare a statement");
    return this.db.prepare(sql);
  }

  exec(sql: string): void {
    this.check("run a statement");
    this.db.exec(sql);
  }

  transaction<A extends unknown[], T>(fn: (...args: A) => T): (...args: A) => T {
    return (...args: A): T => this.savepoint(() => fn(...args));
  }

  close(): void {
    throw new Error("a transaction handle cannot close the store; close the Db that opened it");
  }

  afterCommit(effect: Effect): void {
    this.check("queue an effect");
    this.queue.effects.push(effect);
  }

  /** Runs `fn` in a savepoint with its own handle; on rollback, drops the effects queued since it began. */
  savepoint<T>(fn: (tx: Tx) => T): T {
    this.check("open a savepoint");
    const mark = this.queue.effects.length;
    const inner = new TxHandle(this.db, this.queue);
    try {
      return this.db.transaction(() => notAsync(fn(inner)))();
    } catch (error) {
      this.queue.effects.length = mark;
      throw error;
    } finally {
      inner.end();
    }
  }

  end(): void {
    this.open = false;
  }

  private check(what: string): void {
    if (!this.open) throw new Error(`cannot ${what} on a transaction handle whose transaction has ended; open a new one with transact(db, ...)`);
  }
}

function notAsync<T>(result: T): T {
  if (result instanceof Promise) throw new TypeError("a store transaction's function must not be async (yet: see coordinator/store/tx.ts); the transaction would commit before it ends");
  return result;
}

/**
 * Runs `fn` in a transaction with a new handle and returns its result; after the commit, runs the
 * effects queued on the handle (and on its savepoints') in order. On `db` a `Tx`, opens a savepoint
 * instead, whose effects wait for the outer commit. Throws, changing nothing, when `db` is a plain
 * `Db` already inside a transaction: its effects would run before that transaction commits; pass
 * the enclosing `Tx` instead.
 */
export function transact<T>(db: Db, fn: (tx: Tx) => T, options: TransactOptions = {}): T {
  if (db instanceof TxHandle) return db.savepoint(fn);
  if (db.inTransaction) {
    throw new Error("transact() on a Db already inside a transaction; pass that transaction's Tx so its effects wait for its commit");
  }
  const queue = new EffectQueue(options.logger ?? console);
  const tx = new TxHandle(db, queue);
  let result: T;
  try {
    result = db.transaction(() => notAsync(fn(tx)))();
  } finally {
    tx.end();
  }
  runEffects(queue);
  return result;
}

function runEffects(queue: EffectQueue): void {
  for (const effect of queue.effects) {
    try {
      effect();
    } catch (error) {
      queue.logger.error(`an effect after a commit failed (the transaction stands; the other effects ran): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  }
}
