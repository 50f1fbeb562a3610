/**
 * A lock for async code: `run(fn)` waits its turn, runs `fn`, and hands the lock to the next waiter
 * in arrival order. The SQLite store holds it for a transaction's whole life (the connection is
 * shared, and a transaction spans awaits), so other transactions and statements on the database wait.
 */
export class AsyncMutex {
  private held = false;
  private readonly waiters: Array<() => void> = [];

  /** Whether someone holds the lock now. */
  get locked(): boolean {
    return this.held;
  }

  async run<T>(fn: () => Promise<T> | T): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private release(): void {
    const next = this.waiters.shift();
    // Handed straight to the next waiter, so nobody arriving meanwhile can take it out of turn.
    if (next) next();
    else this.held = false;
  }
}
