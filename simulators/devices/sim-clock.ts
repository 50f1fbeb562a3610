/**
 * Simulated time. `nowNs()` is the world's clock; `sleepUntil(t)` steps the world's physics up to
 * t and resolves. Pending sleepers are served earliest first, in chunks of at most 20 ms of
 * simulated time, so concurrent loops (control, recording) interleave exactly as they would on a
 * real clock. Between chunks the clock waits wall time so that simulated time runs at `speed` x
 * real time (Infinity: no waiting, only a setImmediate to let I/O through). Simulated time stands
 * still while nobody sleeps.
 */
import type { Clock } from "../../cell-agent/hardware/types.js";
import type { SimWorld } from "../world/sim-world.js";

const CHUNK_NS = 20_000_000n;

interface Sleeper {
  tNs: bigint;
  resolve: () => void;
}

export class SimClock implements Clock {
  private sleepers: Sleeper[] = [];
  private driving = false;

  /**
   * speed: simulated seconds per wall second (> 0; Infinity runs as fast as the CPU allows).
   * afterStep: awaited after every chunk, before the sleepers it woke run (wire devices publish the
   * new state there and, when `waking`, wait until it has reached the agent's side, so reads stay
   * deterministic).
   */
  constructor(private readonly world: SimWorld, readonly speed: number, private readonly afterStep?: (waking: boolean) => Promise<void>) {
    if (!(speed > 0)) throw new Error(`simulation speed must be a positive number or Infinity; got ${speed}`);
  }

  nowNs(): bigint {
    return this.world.tNs;
  }

  sleepUntil(tNs: bigint): Promise<void> {
    if (tNs <= this.world.tNs) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.sleepers.push({ tNs, resolve });
      this.sleepers.sort((a, b) => (a.tNs < b.tNs ? -1 : a.tNs > b.tNs ? 1 : 0));
      if (!this.driving) void this.drive();
    });
  }

  private async drive(): Promise<void> {
    this.driving = true;
    const wallStartMs = performance.now();
    const simStartNs = this.world.tNs;
    try {
      while (this.sleepers.length > 0) {
        const target = this.sleepers[0].tNs;
        const chunkEnd = this.world.tNs + CHUNK_NS < target ? this.world.tNs + CHUNK_NS : target;
        this.world.advanceTo(chunkEnd);
        if (this.afterStep) await this.afterStep(this.sleepers[0].tNs <= this.world.tNs);
        while (this.sleepers.length > 0 && this.sleepers[0].tNs <= this.world.tNs) this.sleepers.shift()!.resolve();
        await this.pace(wallStartMs, simStartNs);
      }
    } finally {
      this.driving = false;
    }
  }

  private pace(wallStartMs: number, simStartNs: bigint): Promise<void> {
    const dueMs = Number.isFinite(this.speed) ? wallStartMs + Number(this.world.tNs - simStartNs) / 1e6 / this.speed : 0;
    const waitMs = dueMs - performance.now();
    return new Promise((resolve) => (waitMs >= 1 ? setTimeout(resolve, waitMs) : setImmediate(resolve)));
  }
}
