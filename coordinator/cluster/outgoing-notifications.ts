/**
 * What a coordinator publishes to the others, waiting to go out (cluster-bus.ts): in order, several
 * in one statement, and bounded. Messages published while a batch is sent wait for it and go
 * together, so a fleet's episode events cost the store one statement per batch, not one each.
 *
 * While PostgreSQL does not answer (a statement waits up to its statement_timeout), what is
 * published keeps arriving: at 512 cells several hundred messages a second. Past `maxQueuedBytes`
 * of payloads the oldest are dropped, as a lost listening connection loses them on the other side:
 * NOTIFY is not durable, and everything sent on the bus also reaches its coordinator another way
 * within a bounded time (cluster-bus.ts). Once the queue has drained after a drop, `onDropped` is
 * told how many went, once, so the bus can log it and ask the others to check at once.
 */
export interface OutgoingNotificationsOptions {
  /** Sends one batch (one statement); a rejection is reported to `onError` and the next batch goes on. */
  send(batch: string[]): Promise<void>;
  /** Messages in one batch at most. */
  maxBatch: number;
  /** Payload characters in one batch at most (a longer single payload goes alone). */
  maxBatchChars: number;
  /** Payload characters waiting at most; past it the oldest waiting are dropped. */
  maxQueuedChars: number;
  onDropped(count: number): void;
  onError(error: unknown): void;
}

export class OutgoingNotifications {
  private readonly queue: string[] = [];
  /** Index of the oldest waiting payload in `queue` (taken from the front without shifting). */
  private head = 0;
  private queuedChars = 0;
  private dropped = 0;
  private running: Promise<void> | undefined;

  constructor(private readonly options: OutgoingNotificationsOptions) {}

  /** Messages and payload characters waiting (the batch being sent is no longer counted). */
  get waiting(): { messages: number; chars: number } {
    return { messages: this.queue.length - this.head, chars: this.queuedChars };
  }

  push(payload: string): void {
    this.queue.push(payload);
    this.queuedChars += payload.length;
    while (this.queuedChars > this.options.maxQueuedChars && this.head < this.queue.length - 1) {
      this.queuedChars -= this.take().length;
      this.dropped += 1;
    }
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once nothing waits and no batch is being sent. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private take(): string {
    const payload = this.queue[this.head]!;
    this.queue[this.head] = "";
    this.head += 1;
    // Compact once the taken front is most of the array, so taking stays O(1) amortized and memory is returned.
    if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    return payload;
  }

  private async drain(): Promise<void> {
    const { maxBatch, maxBatchChars } = this.options;
    for (;;) {
      if (this.head === this.queue.length) {
        if (this.dropped === 0) return;
        const count = this.dropped;
        this.dropped = 0;
        this.options.onDropped(count);
        if (this.head === this.queue.length) return;
      }
      // PostgreSQL delivers one of identical payloads sent in one transaction: a batch never holds the same one twice.
      const batch: string[] = [];
      let chars = 0;
      while (this.head < this.queue.length && batch.length < maxBatch) {
        const next = this.queue[this.head]!;
        if (batch.length > 0 && (chars + next.length > maxBatchChars || batch.includes(next))) break;
        chars += next.length;
        batch.push(this.take());
      }
      this.queuedChars -= chars;
      try {
        await this.options.send(batch);
      } catch (error) {
        this.options.onError(error);
      }
    }
  }
}
