/**
 * Async work that must run one piece at a time, in arrival order: a cell's messages (an
 * EpisodeEnded must not overtake its EpisodeStarted while the first awaits the store), the
 * cluster bus's deliveries. `push(work)` queues it behind the pieces already queued; a piece that
 * throws is reported and the next one still runs. `idle()` resolves once the queue is empty.
 */
export interface SerialQueue {
  push(work: () => Promise<void> | void): Promise<void>;
  idle(): Promise<void>;
}

export function serialQueue(onError: (error: unknown) => void): SerialQueue {
  let tail: Promise<void> = Promise.resolve();
  return {
    push(work) {
      const next = tail.then(async () => {
        try {
          await work();
        } catch (error) {
          onError(error);
        }
      });
      tail = next;
      return next;
    },
    async idle() {
      for (let seen: Promise<void> | undefined; seen !== tail; ) {
        seen = tail;
        await seen;
      }
    },
  };
}
