/**
 * A cell's inbound messages on its Connect stream: handled one after another, in arrival order
 * (each awaits the store, and an EpisodeEnded must not overtake its EpisodeStarted), with a bound on
 * how many wait. Once `high` messages wait, the stream is paused: grpc-js then stops reading the
 * HTTP/2 stream, its flow-control window fills, and the agent's writes wait in the agent (its durable
 * outbox keeps the sequenced ones). Reading resumes once the backlog is down to `low`. A store that
 * stalls, or an agent that floods, can so hold at most `high` of a cell's messages (plus the stream's
 * own small object buffer) in the coordinator's memory, and no message is dropped.
 */
import { serialQueue } from "../async/serial-queue.js";

/** What of a readable stream the inbox needs: a Node Readable (a gRPC server call) has both. */
export interface Pausable {
  pause(): unknown;
  resume(): unknown;
}

export interface CellInboxOptions {
  /** Messages waiting (queued or being handled) at which the stream is paused. Default 64. */
  high?: number;
  /** Messages waiting at or below which a paused stream resumes. Default 16. */
  low?: number;
  /** Told +1 when a message starts waiting and -1 when it has been handled (a gauge of all cells). */
  onWaiting?: (change: 1 | -1) => void;
  /** Told each time the stream is paused. */
  onPause?: () => void;
  /** A handler that throws (the next still runs). */
  onError: (error: unknown) => void;
}

export interface CellInbox {
  /** Queues `work` behind what waits; resolves when it has run. */
  push(work: () => Promise<void> | void): Promise<void>;
  /** Resolves once nothing waits. */
  idle(): Promise<void>;
  /** Messages queued or being handled. */
  readonly waiting: number;
  readonly paused: boolean;
}

export const CELL_INBOX_HIGH = 64;
export const CELL_INBOX_LOW = 16;

export function cellInbox(stream: Pausable, options: CellInboxOptions): CellInbox {
  const high = options.high ?? CELL_INBOX_HIGH;
  const low = options.low ?? CELL_INBOX_LOW;
  if (!(Number.isInteger(high) && Number.isInteger(low) && low >= 0 && high > low)) {
    throw new Error(`cell inbox bounds must be integers with 0 <= low < high (got low ${low}, high ${high})`);
  }
  const queue = serialQueue(options.onError);
  let waiting = 0;
  let paused = false;
  return {
    push(work) {
      waiting += 1;
      options.onWaiting?.(1);
      if (!paused && waiting >= high) {
        paused = true;
        stream.pause();
        options.onPause?.();
      }
      return queue.push(async () => {
        try {
          await work();
        } finally {
          waiting -= 1;
          options.onWaiting?.(-1);
          if (paused && waiting <= low) {
            paused = false;
            stream.resume();
          }
        }
      });
    },
    idle: () => queue.idle(),
    get waiting() {
      return waiting;
    },
    get paused() {
      return paused;
    },
  };
}
