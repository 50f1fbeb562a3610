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
 * The store is asynchronous: `transact(db, async (tx) => ...)` takes the connection for the
 * transaction (on PostgreSQL a client from the pool, on SQLite the connection under its lock),
 * awaits `fn(tx)`, commits and gives the connection back, then runs the effects (awaiting each in
 * turn). `tx.prepare(...)` goes to that connection; a statement on the database itself from inside
 * the transaction's async context is refused (pass `tx`). docs/store.md says the same for readers.
 */
import type { Db, Dialect, Statement } from "./db.js";

/** Something to do once the transaction has committed; awaited before the next effect runs. */
export type Effect = () => void | Promise<void>;

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

  /** `connection`: the engine's executor bound to this transaction (or savepoint). */
  constructor(private readonly connection: Db, private readonly queue: EffectQueue) {}

  get dialect(): Dialect {
    return this.connection.dialect;
  }

  get inTransaction(): boolean {
    return this.open;
  }

  prepare(sql: string): Statement {
    this.check("prepare a statement");
    return this.connection.prepare(sql);
  }

  async exec(sql: string): Promise<void> {
    this.check("run a statement");
    await this.connection.exec(sql);
  }

  transaction<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return this.savepoint(fn);
  }

  close(): Promise<void> {
    return Promise.reject(new Error("a transaction handle cannot close the store; close the Db that opened it"));
  }

  afterCommit(effect: Effect): void {
    this.check("queue an effect");
    this.queue.effects.push(effect);
  }

  /** Runs `fn` in a savepoint with its own handle; on rollback, drops the effects queued since it began. */
  async savepoint<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    this.check("open a savepoint");
    const mark = this.queue.effects.length;
    let inner: TxHandle | undefined;
    try {
      return await this.connection.transaction(async (connection) => {
        inner = new TxHandle(connection, this.queue);
        try {
          return await fn(inner);
        } finally {
          inner.end();
        }
      });
    } catch (error) {
      this.queue.effects.length = mark;
      throw error;
    }
  }

  end(): void {
    this.open = false;
  }

  private check(what: string): void {
    if (!this.open) throw new Error(`cannot ${what} on a transaction handle whose transaction has ended; open a new one with transact(db, ...)`);
  }
}

/**
 * Runs `fn` in a transaction with a new handle and returns its result; after the commit, runs the
 * effects queued on the handle (and on its savepoints') in order. On `db` a `Tx`, opens a savepoint
 * instead, whose effects wait for the outer commit. Throws, changing nothing, when `db` is a plain
 * `Db` and the caller is inside one of its transactions: its effects would run before that
 * transaction commits (and on SQLite it would wait for itself); pass the enclosing `Tx` instead.
 */
export async function transact<T>(db: Db, fn: (tx: Tx) => Promise<T>, options: TransactOptions = {}): Promise<T> {
  if (db instanceof TxHandle) return db.savepoint(fn);
  if (db.inTransaction) {
    throw new Error("transact() on a Db already inside a transaction; pass that transaction's Tx so its effects wait for its commit");
  }
  const queue = new EffectQueue(options.logger ?? console);
  const result = await db.transaction(async (connection) => {
    const tx = new TxHandle(connection, queue);
    try {
      return await fn(tx);
    } finally {
      tx.end();
    }
  });
  await runEffects(queue);
  return result;
}

async function runEffects(queue: EffectQueue): Promise<void> {
  for (const effect of queue.effects) {
    try {
      await effect();
    } catch (error) {
      queue.logger.error(`an effect after a commit failed (the transaction stands; the other effects ran): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  }
}
