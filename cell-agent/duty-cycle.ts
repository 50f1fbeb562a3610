/** Share of a trailing window (default 10 minutes) spent busy, for Heartbeat.duty_cycle_pct. */
export class DutyCycle {
  private readonly intervals: Array<[number, number]> = [];
  private busySinceMs: number | undefined;

  constructor(private readonly windowMs = 600_000, private readonly nowMs: () => number = () => performance.now()) {}

  begin(): void {
    this.busySinceMs ??= this.nowMs();
  }

  end(): void {
    if (this.busySinceMs === undefined) return;
    this.intervals.push([this.busySinceMs, this.nowMs()]);
    this.busySinceMs = undefined;
  }

  percent(): number {
    const now = this.nowMs();
    const from = now - this.windowMs;
    while (this.intervals.length && this.intervals[0][1] < from) this.intervals.shift();
    let busyMs = 0;
    for (const [start, stop] of this.intervals) busyMs += stop - Math.max(start, from);
    if (this.busySinceMs !== undefined) busyMs += now - Math.max(this.busySinceMs, from);
    return Math.min(100, (100 * busyMs) / this.windowMs);
  }
}
