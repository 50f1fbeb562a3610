/**
 * Which of the cell's instruments stopped answering. An instrument is marked down when an episode's
 * reads of it fail several times in a row (the runner's `instrument_lost`: a NatNet stream gone stale,
 * an F/T or gripper read that errors); it comes back when a probe (one read, every `probeIntervalMs`)
 * answers again. Heartbeats carry the down list (Heartbeat.instruments_down), so the coordinator
 * gives this cell only episodes it can still score.
 */
export interface InstrumentRef {
  kind: string;
  name: string;
}

export interface InstrumentHealthOptions {
  /** One read of each probeable instrument, by kind; resolves when it answers, rejects when not. */
  probes: Record<string, (() => Promise<unknown>) | undefined>;
  /** Called after the down set changed (lost or back): the agent sends a heartbeat at once. */
  onChange: () => void;
  log: (line: string) => void;
  /** Period of the probe of down instruments; default 1000 ms. */
  probeIntervalMs?: number;
}

export class InstrumentHealth {
  private readonly down = new Map<string, { ref: InstrumentRef; detail: string }>();
  private timer: NodeJS.Timeout | undefined;
  private probing = false;

  constructor(private readonly options: InstrumentHealthOptions) {}

  /** Marks an instrument down (idempotent) and starts probing it; `detail` is a sentence naming it and why. */
  markDown(ref: InstrumentRef, detail: string): void {
    const key = `${ref.kind}/${ref.name}`;
    if (this.down.has(key)) return;
    this.down.set(key, { ref, detail });
    this.options.log(`${detail}; the coordinator is told, and episodes that read it go to other cells until it answers again`);
    this.options.onChange();
    this.timer ??= setInterval(() => void this.probe(), this.options.probeIntervalMs ?? 1000);
    this.timer.unref();
  }

  /** The instruments down now, in the order they were lost. */
  list(): InstrumentRef[] {
    return [...this.down.values()].map((d) => ({ ...d.ref }));
  }

  /** Reads each down instrument once; those that answer are up again. */
  async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      let changed = false;
      for (const [key, { ref }] of [...this.down]) {
        const read = this.options.probes[ref.kind];
        if (!read) continue;
        const answered = await read().then(() => true, () => false);
        if (answered) {
          this.down.delete(key);
          changed = true;
          this.options.log(`instrument ${ref.kind}${ref.name ? ` "${ref.name}"` : ""} answers again`);
        }
      }
      if (this.down.size === 0) this.stop();
      if (changed) this.options.onChange();
    } finally {
      this.probing = false;
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
