/**
 * An `EstopInput` read by polling a line (a serial modem-status line or a GPIO value). The reading
 * is fail-safe: a line that cannot be read counts as pressed, so a pulled cable stops the robot.
 */
import type { EstopInput } from "../../hardware/types.js";

/** Reads the line once; true means the e-stop is pressed. Throwing counts as pressed. */
export type EstopReader = () => boolean | Promise<boolean>;

export interface PolledEstopOptions {
  read: EstopReader;
  /** Poll period, ms (the agent's config default is 2). */
  pollMs: number;
  /** Plain-words description of the input for log lines, e.g. "CTS of /dev/ttyUSB1". */
  describe: string;
  log?: (line: string) => void;
  /** Releases the line (closes the port or file); called once by close(). */
  release?: () => Promise<void> | void;
}

export class PolledEstop implements EstopInput {
  private pressed: boolean;
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  private lastError = "";

  /** `initiallyPressed` is the first reading, taken by the caller before polling starts. */
  constructor(private readonly options: PolledEstopOptions, initiallyPressed: boolean) {
    this.pressed = initiallyPressed;
    this.timer = setInterval(() => void this.poll(), options.pollMs);
  }

  /** Takes a first reading (a failure counts as pressed) and starts polling. */
  static async start(options: PolledEstopOptions): Promise<PolledEstop> {
    let first = true;
    try {
      first = await options.read();
    } catch (error) {
      options.log?.(`e-stop input ${options.describe} cannot be read (${(error as Error).message}); treating it as pressed`);
    }
    return new PolledEstop(options, first);
  }

  isPressed(): boolean {
    return this.pressed;
  }

  onTrigger(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.options.release?.();
  }

  private async poll(): Promise<void> {
    // A slow read (ioctl) must not pile up reads behind it.
    if (this.reading || !this.timer) return;
    this.reading = true;
    let now: boolean;
    try {
      now = await this.options.read();
      this.lastError = "";
    } catch (error) {
      const message = (error as Error).message;
      if (message !== this.lastError) this.options.log?.(`e-stop input ${this.options.describe} cannot be read (${message}); treating it as pressed`);
      this.lastError = message;
      now = true;
    } finally {
      this.reading = false;
    }
    const wasPressed = this.pressed;
    this.pressed = now;
    if (now && !wasPressed) for (const listener of [...this.listeners]) listener();
  }
}
