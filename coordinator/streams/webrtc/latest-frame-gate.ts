/**
 * Hands frames to a sink that is sometimes busy (an encoder's stdin) at a bounded rate, and never
 * queues: the frame written is always the newest one seen.
 *
 * The bound is a token bucket (one token per `minIntervalMs`, at most `burst` saved up), decided
 * when a frame arrives: with a token it is written at once, without one it is held, and a newer
 * frame replaces it. A held frame is written only if nothing newer arrives within one interval (the
 * source paused: its last picture still reaches the viewer). Holding frames until the bound allows
 * them instead would delay every frame of a source even slightly faster than the bound by up to
 * one interval (measured: 15 Hz frames through a 15 Hz gate gained 30 ms on average).
 * While the sink is busy, frames are held the same way and the newest is written when it is ready.
 */

/** Time and timers, injectable so tests step them by hand. */
export interface GateClock {
  nowMs(): number;
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemGateClock: GateClock = {
  nowMs: () => performance.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface LatestFrameGateOptions<T> {
  /** Average time between writes (1000 / the frame-rate bound). */
  minIntervalMs: number;
  /** Writes that may follow each other closer than `minIntervalMs` after a quiet spell; default 2. */
  burst?: number;
  /**
   * Writes one frame. Returns false when the sink is busy after this write; the gate then writes
   * nothing more until `ready()` is called (a stream's `write()` result and its "drain" event).
   */
  write(frame: T): boolean;
  clock?: GateClock;
}

export interface GateCounts {
  offered: number;
  written: number;
  /** Frames replaced by a newer one before they were written. */
  dropped: number;
}

export class LatestFrameGate<T> {
  readonly counts: GateCounts = { offered: 0, written: 0, dropped: 0 };
  private held: { frame: T } | undefined;
  private busy = false;
  private closed = false;
  private tokens: number;
  private refilledAtMs: number;
  private flushTimer: unknown;
  private readonly burst: number;
  private readonly clock: GateClock;

  constructor(private readonly options: LatestFrameGateOptions<T>) {
    if (!(options.minIntervalMs > 0)) {
      throw new Error(`minIntervalMs must be a positive number of milliseconds; got ${options.minIntervalMs}`);
    }
    this.burst = options.burst ?? 2;
    if (!(this.burst >= 1)) throw new Error(`burst must be at least 1; got ${this.burst}`);
    this.clock = options.clock ?? systemGateClock;
    this.tokens = this.burst;
    this.refilledAtMs = this.clock.nowMs();
  }

  /** Offers the newest frame: written now if the bound and the sink allow, else held (replacing a held one). */
  offer(frame: T): void {
    if (this.closed) return;
    this.counts.offered++;
    this.hold(frame);
    if (!this.busy && this.takeToken()) this.writeHeld();
    else if (!this.busy) this.armFlush(this.options.minIntervalMs);
  }

  /** The sink can take a frame again. */
  ready(): void {
    this.busy = false;
    if (this.closed || !this.held) return;
    if (this.takeToken()) this.writeHeld();
    else this.armFlush(this.options.minIntervalMs);
  }

  /** Drops a held frame and writes nothing more. */
  close(): void {
    this.closed = true;
    if (this.held) this.counts.dropped++;
    this.held = undefined;
    this.disarmFlush();
  }

  private hold(frame: T): void {
    if (this.held) this.counts.dropped++;
    this.held = { frame };
  }

  private takeToken(): boolean {
    const now = this.clock.nowMs();
    this.tokens = Math.min(this.burst, this.tokens + (now - this.refilledAtMs) / this.options.minIntervalMs);
    this.refilledAtMs = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private writeHeld(): void {
    const { frame } = this.held!;
    this.held = undefined;
    this.disarmFlush();
    this.counts.written++;
    if (!this.options.write(frame)) this.busy = true;
  }

  /** Writes the held frame after `delayMs` unless a newer frame or the sink comes first. */
  private armFlush(delayMs: number): void {
    this.disarmFlush();
    this.flushTimer = this.clock.setTimeout(() => {
      this.flushTimer = undefined;
      if (this.closed || this.busy || !this.held) return;
      if (this.takeToken()) this.writeHeld();
      else this.armFlush((1 - this.tokens) * this.options.minIntervalMs);
    }, delayMs);
  }

  private disarmFlush(): void {
    if (this.flushTimer !== undefined) this.clock.clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
  }
}
