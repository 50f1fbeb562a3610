/**
 * The half-duplex transaction layer under `SerialServoBus`: one request in flight, a timeout per
 * attempt sized to the bytes on the wire, retries for lost or damaged replies, priority jobs that jump
 * the queue (the torque-off path), and counters for metrics.
 */
import type { FrameError, ParseEvent, ServoCodec, StatusPacket } from "./codec.js";
import type { ServoPort } from "./servo-bus-options.js";

/** Counters since the bus was opened; exported as metrics. */
export interface ServoBusCounters {
  /** Transactions completed or failed. */
  transactions: number;
  /** Transactions that failed for good: every attempt used, or the servo refused the instruction. */
  txErrors: number;
  /** Attempts that ended in silence (an expected servo never answered). */
  timeouts: number;
  /** Replies dropped because their checksum (Feetech) or CRC (Dynamixel) was wrong. */
  checksumErrors: number;
  /** Replies with an impossible header or an unexpected parameter count. */
  malformedFrames: number;
  /** Replies cut short (the bytes stopped before the declared length). */
  shortFrames: number;
  /** Bytes that belonged to no frame (line noise, a servo talking out of turn). */
  discardedBytes: number;
  /** Requests sent again after a timeout or a damaged reply. */
  retries: number;
  /** Replies whose error byte was set (overheat, overload, voltage, hardware alert...). */
  servoErrors: number;
  /** Dynamixel servos found stopped by their bus watchdog (and re-armed). */
  watchdogTrips: number;
  /** Goal writes dropped because torque was off (after an e-stop). */
  goalWritesSuppressed: number;
}

export function emptyCounters(): ServoBusCounters {
  return {
    transactions: 0, txErrors: 0, timeouts: 0, checksumErrors: 0, malformedFrames: 0, shortFrames: 0,
    discardedBytes: 0, retries: 0, servoErrors: 0, watchdogTrips: 0, goalWritesSuppressed: 0,
  };
}

/** A bus failure that the caller should see: which operation, which servos, what went wrong. */
export class ServoBusError extends Error {
  constructor(message: string, readonly ids: readonly number[] = [], options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ServoBusError";
  }
}

export interface TransactionSpec {
  /** For logs and errors, e.g. "sync read state". */
  label: string;
  /** Servos expected to answer; empty for broadcast writes. */
  ids: readonly number[];
  /** Builds the request for the servos still missing (a retried sync read asks only those). */
  build(ids: readonly number[]): Uint8Array;
  /** Parameter bytes every reply must carry. */
  responseParams: number;
  /** Jumps ahead of every queued non-priority job. */
  priority?: boolean;
  /** Cancelled (resolved empty, never sent) by `cancelQueued`. */
  cancellable?: boolean;
}

interface Job {
  spec: TransactionSpec;
  pending: Set<number>;
  results: Map<number, StatusPacket>;
  attempt: number;
  frameErrors: number;
  timer: NodeJS.Timeout | null;
  resolve(results: Map<number, StatusPacket>): void;
  reject(error: Error): void;
}

export interface TransportOptions {
  baudRate: number;
  transactionTimeoutMs: number;
  retries: number;
  nowMs: () => number;
}

export class ServoTransport {
  readonly counters = emptyCounters();
  /** Error byte of each servo's latest reply. */
  readonly lastServoError = new Map<number, number>();
  /** When the last request left, ms on the bus's clock. */
  lastRequestMs = -Infinity;
  private readonly parser;
  private readonly queue: Job[] = [];
  private active: Job | null = null;
  private closed: Error | null = null;
  /** Some half-duplex adapters echo what we send; a Feetech echo would parse as a reply. */
  private lastRequest: Uint8Array = new Uint8Array(0);

  constructor(private readonly port: ServoPort, private readonly codec: ServoCodec, private readonly options: TransportOptions) {
    this.parser = codec.createParser();
    port.on("data", this.onData);
    port.on("close", this.onClose);
  }

  run(spec: TransactionSpec): Promise<Map<number, StatusPacket>> {
    if (this.closed) return Promise.reject(this.closed);
    return new Promise((resolve, reject) => {
      const job: Job = { spec, pending: new Set(spec.ids), results: new Map(), attempt: 0, frameErrors: 0, timer: null, resolve, reject };
      if (spec.priority) {
        let at = 0;
        while (at < this.queue.length && this.queue[at].spec.priority) at++;
        this.queue.splice(at, 0, job);
      } else {
        this.queue.push(job);
      }
      this.pump();
    });
  }

  /** Drops queued (not yet sent) cancellable jobs; they resolve with no replies. Returns how many. */
  cancelQueued(): number {
    let dropped = 0;
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (this.queue[i].spec.cancellable) {
        const [job] = this.queue.splice(i, 1);
        job.resolve(new Map());
        dropped++;
      }
    }
    return dropped;
  }

  detach(): void {
    this.port.removeListener("data", this.onData);
    this.port.removeListener("close", this.onClose);
    this.onClose();
  }

  private pump(): void {
    if (this.active || this.queue.length === 0 || this.closed) return;
    this.active = this.queue.shift()!;
    this.startAttempt(this.active);
  }

  private startAttempt(job: Job): void {
    // Leftovers of an earlier attempt must not be mistaken for this one's replies.
    this.handle(this.parser.flush(), false);
    job.frameErrors = 0;
    const ids = [...job.pending];
    const request = job.spec.build(ids);
    const replyBytes = ids.length * this.codec.statusLength(job.spec.responseParams);
    const timeoutMs = this.options.transactionTimeoutMs + ((request.length + replyBytes) * 10 * 1000) / this.options.baudRate;
    this.lastRequestMs = this.options.nowMs();
    this.lastRequest = request;
    this.port.write(Buffer.from(request), (error) => {
      if (job !== this.active) return;
      if (error) return this.fail(job, new ServoBusError(`${job.spec.label}: write failed: ${error.message}`, ids, { cause: error }));
      if (job.pending.size === 0) return this.finish(job);
    });
    if (ids.length > 0) job.timer = setTimeout(() => this.onTimeout(job), timeoutMs);
  }

  private onTimeout(job: Job): void {
    job.timer = null;
    if (job !== this.active) return;
    this.handle(this.parser.flush(), true);
    if (job !== this.active || job.pending.size === 0) return;
    if (job.frameErrors === 0) this.counters.timeouts++;
    this.retryOrFail(job, `no valid reply within the timeout`);
  }

  private retryOrFail(job: Job, why: string): void {
    if (job.timer) clearTimeout(job.timer);
    job.timer = null;
    if (job.attempt < this.options.retries) {
      job.attempt++;
      this.counters.retries++;
      this.startAttempt(job);
      return;
    }
    const ids = [...job.pending];
    this.fail(job, new ServoBusError(`${job.spec.label}: servo id(s) ${ids.join(", ")}: ${why} after ${job.attempt + 1} attempts; check power, wiring and baud rate`, ids));
  }

  private finish(job: Job): void {
    if (job.timer) clearTimeout(job.timer);
    this.active = null;
    this.counters.transactions++;
    job.resolve(job.results);
    this.pump();
  }

  private fail(job: Job, error: Error): void {
    if (job.timer) clearTimeout(job.timer);
    this.active = null;
    this.counters.transactions++;
    this.counters.txErrors++;
    job.reject(error);
    this.pump();
  }

  private readonly onData = (chunk: Buffer): void => {
    this.handle(this.parser.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length)), true);
  };

  private readonly onClose = (): void => {
    if (this.closed) return;
    this.closed = new ServoBusError("servo bus port closed");
    const jobs = this.active ? [this.active, ...this.queue] : [...this.queue];
    this.queue.length = 0;
    this.active = null;
    for (const job of jobs) {
      if (job.timer) clearTimeout(job.timer);
      job.reject(this.closed);
    }
  };

  private countFrameError(error: FrameError): boolean {
    switch (error.kind) {
      case "garbage":
        this.counters.discardedBytes += error.bytes.length;
        return false;
      case "checksum":
        this.counters.checksumErrors++;
        return true;
      case "malformed":
        this.counters.malformedFrames++;
        return true;
      case "short":
        this.counters.shortFrames++;
        return true;
    }
  }

  private handle(events: ParseEvent[], attribute: boolean): void {
    for (const event of events) {
      const job = this.active;
      if (event.type === "error") {
        if (this.countFrameError(event.error) && attribute && job) job.frameErrors++;
        continue;
      }
      if (isSame(event.frame.raw, this.lastRequest)) continue;
      const status = this.codec.toStatus(event.frame);
      // Not a reply (an adapter echoing our own request), or a reply nobody is waiting for.
      if (!status || !job || !job.pending.has(status.id)) {
        if (status) this.counters.discardedBytes += event.frame.raw.length;
        continue;
      }
      if (this.codec.isInstructionError(status.error)) {
        this.counters.servoErrors++;
        this.lastServoError.set(status.id, status.error);
        this.fail(job, new ServoBusError(`${job.spec.label}: servo id ${status.id} refused the instruction (${this.codec.describeError(status.error)})`, [status.id]));
        continue;
      }
      if (status.params.length !== job.spec.responseParams) {
        this.counters.malformedFrames++;
        job.frameErrors++;
        continue;
      }
      if (status.error) this.counters.servoErrors++;
      this.lastServoError.set(status.id, status.error);
      job.results.set(status.id, status);
      job.pending.delete(status.id);
      if (job.pending.size === 0) this.finish(job);
    }
    // Every missing reply is accounted for by a damaged frame: retry now rather than wait out the timeout.
    const job = this.active;
    if (job && job.timer && job.frameErrors > 0 && job.frameErrors >= job.pending.size && this.parser.pendingBytes === 0) {
      this.retryOrFail(job, "damaged replies");
    }
  }
}

function isSame(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
