/**
 * A scripted cell for the scale bench: a ScriptedAgent (test/support/scripted-agent.ts, a real
 * CellLink gRPC client, here on a connection of its own as a real cell has) that says Hello,
 * heartbeats every second as the real agent does, and plays every episode it is given for a fixed
 * wall-clock time: EpisodeStarted, wait, EpisodeFinished with no artifacts (the run needs none to
 * count the episode). It reports every assignment and, for every one after its first, the
 * scheduling latency the cell sees: from writing EpisodeFinished to receiving this AssignEpisode.
 *
 * The coordinator acks EpisodeFinished before its scheduler pass can send the next assignment, so
 * the assignment is awaited right after the ack, within the same turn of the event loop in which
 * it arrives.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { AssignEpisode, Heartbeat } from "../../protocol/gen/cell.js";
import { ScriptedAgent } from "../../test/support/scripted-agent.js";

export interface PacedCellOptions {
  /** The coordinator's CellLink address, host:port. */
  address: string;
  token: string;
  cellId: string;
  /** Wall-clock length of every episode. */
  episodeMs: number;
  /** Extra wait before the first episode starts, so that a fleet's finishes spread out. */
  firstDelayMs: number;
  heartbeatMs: number;
  /** Each assignment, with the latency since the cell's last finish (undefined for its first). */
  onAssignment(latencyMs: number | undefined): void;
  /** The stream ended while the cell was running. */
  onLost(error: Error): void;
}

export class PacedCell {
  private readonly agent: ScriptedAgent;
  private heartbeat?: NodeJS.Timeout;
  private episodeId = "";
  private stopped = false;

  constructor(private readonly options: PacedCellOptions) {
    this.agent = new ScriptedAgent(options.address, options.token, options.cellId, { "grpc.use_local_subchannel_pool": 1 });
  }

  /** Connects (resolves once welcomed), then plays episodes until stop(). */
  async start(): Promise<void> {
    await this.agent.connect();
    void this.agent.ended!.then((error) => {
      clearTimeout(this.heartbeat);
      if (!this.stopped) this.options.onLost(new Error(`cell ${this.options.cellId}: stream ended (${error?.message ?? "closed by the coordinator"})`));
    });
    // The first beat at a point of the period that differs from cell to cell, as a fleet's would.
    const beat = () => this.agent.send({ heartbeat: this.heartbeatNow() });
    this.heartbeat = setTimeout(() => {
      beat();
      this.heartbeat = setInterval(beat, this.options.heartbeatMs);
    }, this.options.firstDelayMs % this.options.heartbeatMs);
    void this.play().catch((error: Error) => {
      if (!this.stopped) this.options.onLost(error);
    });
  }

  /** Closes the stream and the client; safe to call twice. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.heartbeat); // the first beat's timeout, or the interval after it
    this.agent.close();
  }

  private heartbeatNow(): Heartbeat {
    return { sentAtMs: Date.now(), state: this.episodeId ? "busy" : "idle", episodeId: this.episodeId, dutyCyclePct: 0, uploadBacklog: 0, instrumentsDown: [] };
  }

  private async play(): Promise<void> {
    let finishedAt: number | undefined;
    let delayMs = this.options.firstDelayMs;
    while (!this.stopped) {
      const assign: AssignEpisode = await this.agent.next((m) => m.assignEpisode);
      const assignedAt = performance.now();
      if (this.stopped) return;
      this.options.onAssignment(finishedAt === undefined ? undefined : assignedAt - finishedAt);
      this.episodeId = assign.episodeId;
      await sleep(delayMs);
      delayMs = 0;
      if (this.stopped) return;
      await this.agent.started(assign);
      await sleep(this.options.episodeMs);
      if (this.stopped) return;
      // Idle from here: a heartbeat written after the finish must not say busy.
      this.episodeId = "";
      finishedAt = performance.now();
      await this.agent.finished(assign, "success", this.options.episodeMs / 1000, 0);
    }
  }
}
