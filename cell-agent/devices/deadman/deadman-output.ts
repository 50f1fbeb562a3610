/**
 * The dead-man output: a line the agent toggles while it is alive, for a hardware watchdog relay
 * in the servo power (a retriggerable timer relay: power stays on while the line keeps changing,
 * and drops when it stops). It is the answer to buses without a watchdog of their own (Feetech STS,
 * most ROS robots' position controllers): if the agent process dies or its event loop hangs, the
 * toggling stops and the relay cuts servo power after its own timeout. docs/safety.md, section 3.
 *
 * The line is driven low on a clean stop, so a relay also drops when the agent is shut down.
 */

/** One digital output: a serial modem line (DTR/RTS) or a GPIO line. */
export interface DeadmanLine {
  /** What the line is, for logs and the doctor: e.g. "DTR of /dev/ttyUSB1". */
  readonly describe: string;
  set(high: boolean): Promise<void>;
  close(): Promise<void>;
}

export interface DeadmanOutputOptions {
  /** Half period of the square wave, ms: the line changes level this often (default 50). */
  togglePeriodMs: number;
  log?: (line: string) => void;
}

export class DeadmanOutput {
  private timer: NodeJS.Timeout | undefined;
  private level = false;
  private writing = false;
  private failed = false;
  /** Level changes written so far. */
  toggles = 0;
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly line: DeadmanLine, private readonly options: DeadmanOutputOptions) {
    if (!(Number.isFinite(options.togglePeriodMs) && options.togglePeriodMs >= 1)) throw new RangeError(`dead-man togglePeriodMs must be at least 1; got ${JSON.stringify(options.togglePeriodMs)}`);
  }

  get describe(): string {
    return this.line.describe;
  }

  /** Starts toggling. The timer does not keep the process alive. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.toggle(), this.options.togglePeriodMs);
    this.timer.unref();
  }

  /** Resolves after the next level change (tests and the doctor await a toggle, not a moment). */
  nextToggle(): Promise<void> {
    return new Promise((resolve) => this.listeners.push(resolve));
  }

  private async toggle(): Promise<void> {
    if (this.writing) return; // a slow line: skip a beat rather than queue writes
    this.writing = true;
    try {
      await this.line.set(!this.level);
      this.level = !this.level;
      this.toggles++;
      if (this.failed) this.options.log?.(`dead-man output ${this.line.describe} toggles again`);
      this.failed = false;
      for (const listener of this.listeners.splice(0)) listener();
    } catch (error) {
      if (!this.failed) this.options.log?.(`dead-man output ${this.line.describe} cannot be set: ${(error as Error).message}; the watchdog relay will cut servo power`);
      this.failed = true;
    } finally {
      this.writing = false;
    }
  }

  /** Stops toggling, drives the line low and releases it. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.line.set(false).catch(() => undefined);
    await this.line.close();
  }
}
