/**
 * The store's connection as the coordinator uses it, the same on SQLite and PostgreSQL
 * (database.ts opens one; docs/store.md). Every statement is awaited: on PostgreSQL it goes to a
 * pool (or to the client a transaction holds), and better-sqlite3 answers with a resolved promise.
 */

export type Dialect = "sqlite" | "postgres";

/** A statement; parameters are `?` in order, or `@name` bound from one object. Cached by its SQL text. */
export interface Statement {
  /** The first row, or undefined. */
  get(...params: unknown[]): Promise<unknown>;
  all(...params: unknown[]): Promise<unknown[]>;
  /**
   * The first row as its column values in the SELECT's order, or undefined: no object with a
   * property per column is made (for the reads on every request, such as getRunView).
   */
  values(...params: unknown[]): Promise<unknown[] | undefined>;
  /** `changes`: rows inserted, updated or deleted. */
  run(...params: unknown[]): Promise<{ changes: number }>;
}

/** The store's connection, the same on both engines. */
export interface Db {
  readonly dialect: Dialect;
  /**
   * On a transaction's handle: whether its transaction is still open. On the database: whether the
   * calling async context is inside one of its transactions (where a statement on the database
   * itself is refused: pass the transaction's handle).
   */
  readonly inTransaction: boolean;
  prepare(sql: string): Statement;
  /**
   * Runs `fn` in a transaction (a savepoint when called on a transaction's handle) with an executor
   * bound to it, and awaits it before COMMIT; ROLLBACK when it throws. On PostgreSQL it runs at READ
   * COMMITTED: a decision that reads rows another coordinator may change locks them. For
   * repositories only: code outside coordinator/store/ opens transactions with `transact` (tx.ts),
   * whose handle carries the after-commit effects.
   */
  transaction<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  /** Runs statements without parameters. */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

/** The error for a statement on the database issued from inside one of its transactions. */
export function rootStatementInTransaction(): Error {
  return new Error(
    "a statement on the store's Db was issued from inside a transaction on it: pass the transaction's handle (tx) instead " +
      "(on SQLite it would wait for that transaction forever; on PostgreSQL it would run outside it)",
  );
}
