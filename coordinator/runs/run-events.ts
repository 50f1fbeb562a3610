/**
 * In-process fan-out of run events to SSE subscribers (and, later, webhooks). The store is the
 * record; these are notifications, so a subscriber that connects late reads history from the store
 * first and then listens here.
 */
import { EventEmitter } from "node:events";

/** Data of the SSE `episode` event, exactly as the spec names it. */
export interface EpisodeEventData {
  episode: number;
  of: number;
  outcome: "success" | "failure";
  duration_s: number;
}

/** Data of the SSE `status` event, exactly as the spec names it. */
export interface StatusEventData {
  status: string;
  cell: string | null;
  webrtc: string | null;
}

export type RunEvent =
  | { runId: string; type: "episode"; data: EpisodeEventData }
  | { runId: string; type: "status"; data: StatusEventData };

export class RunEvents {
  private readonly emitter = new EventEmitter();

  /**
   * `relay`: also sends each published event to the other coordinators on the same database
   * (coordinator/cluster/), whose SSE clients get it through `deliver`. Default none.
   */
  constructor(private readonly relay?: (event: RunEvent) => void) {
    // One listener per open SSE connection; many clients may watch one run.
    this.emitter.setMaxListeners(0);
  }

  publish(event: RunEvent): void {
    this.emitter.emit(event.runId, event);
    this.emitter.emit("*", event);
    this.relay?.(event);
  }

  /**
   * An event another coordinator published: to this process's listeners of that run only ("*"
   * listeners count what happens here).
   */
  deliver(event: RunEvent): void {
    this.emitter.emit(event.runId, event);
  }

  /** Listens to one run (or "*" for all); returns the unsubscribe function. */
  subscribe(runId: string, listener: (event: RunEvent) => void): () => void {
    this.emitter.on(runId, listener);
    return () => this.emitter.off(runId, listener);
  }
}
