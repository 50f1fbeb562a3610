/**
 * The store's connection as the coordinator uses it, the same on SQLite and PostgreSQL
 * (database.ts opens one; docs/store.md).
 */

export type Dialect = "sqlite" | "postgres";

/** A prepared statement; parameters are `?` in order, or `@name` bound from one object. */
export interface Statement {
  /** The first row, or undefined. */
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  /** `changes`: rows inserted, updated or deleted. */
  run(...params: unknown[]): { changes: number };
}

/** The store's connection, the same on both engines. */
export interface Db {
  readonly dialect: Dialect;
  readonly inTransaction: boolean;
  prepare(sql: string): Statement;
  /**
   * Wraps `fn` in a transaction (a savepoint when nested). `fn` must be synchronous. On PostgreSQL
   * it runs at READ COMMITTED: a decision that reads rows another coordinator may change locks them.
   * For repositories only: code outside coordinator/store/ opens transactions with `transact`
   * (tx.ts), whose handle carries the after-commit effects.
   */
  transaction<A extends unknown[], T>(fn: (...args: A) => T): (...args: A) => T;
  /** Runs statements without parameters. */
  exec(sql: string): void;
  close(): void;
}
