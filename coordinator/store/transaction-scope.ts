/**
 * Marks the async context of a database's open transaction, so that a statement on the database
 * itself issued from inside it is refused with a plain error instead of deadlocking (SQLite: it
 * would wait for the transaction's lock) or running outside the transaction (PostgreSQL: it would
 * take another pooled client). One per database; work a transaction left behind (a timer it set)
 * is not refused once the transaction has ended.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { rootStatementInTransaction } from "./db.js";

export class TransactionScope {
  private readonly storage = new AsyncLocalStorage<{ open: boolean }>();
  /** Transactions of this database open now (SQLite: at most one; PostgreSQL: one per pooled client). */
  private opened = 0;

  /** Whether the calling context is inside an open transaction of this database. */
  get active(): boolean {
    return this.storage.getStore()?.open === true;
  }

  /** Throws the "pass tx" error when the calling context is inside an open transaction. */
  check(): void {
    if (this.active) throw rootStatementInTransaction();
  }

  /** Runs `fn` marked as inside a transaction until it settles. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const mark = { open: true };
    this.opened += 1;
    try {
      return await this.storage.run(mark, fn);
    } finally {
      mark.open = false;
      // With no transaction open, no context can be inside one: switch the storage off, and with it
      // (when no other storage is on) the promise hooks every promise of the process would pay.
      // run() switches it back on; a context a transaction left behind then finds its closed mark.
      if (--this.opened === 0) this.storage.disable();
    }
  }
}
