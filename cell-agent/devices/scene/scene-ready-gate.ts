/**
 * The hand-off between a reset that waits for a person and whoever answers for that person: the
 * agent's loopback `POST /scene-ready`, and the coordinator's operator station (OperatorAnswer over
 * the link). The agent subscribes to learn when a person is needed (it reports `awaiting_reset` and
 * an Attention) and cancels the wait when the episode is aborted.
 */
import type { ResetPlan } from "../../hardware/types.js";

/** What the technician should set up, as `GET /scene-ready` shows it; null when nothing is awaited. */
export interface PendingScene {
  since: string;
  lighting: string;
  objects: Record<string, { object: string; positionM: [number, number, number]; yawRad: number }>;
  distractors: ResetPlan["distractors"];
}

/** How a wait ended: confirmed after `waitedMs` of wall-clock time. */
export interface SceneConfirmed {
  waitedMs: number;
}

export class SceneReadyGate {
  private waiting: { pending: PendingScene; confirm: () => void; cancel: (reason: string) => void } | undefined;
  private readonly listeners = new Set<(pending: PendingScene | null) => void>();

  constructor(private readonly nowMs: () => number = Date.now) {}

  get pending(): PendingScene | null {
    return this.waiting?.pending ?? null;
  }

  /** Calls `listener` with the scene whenever a wait begins, and with null when it ends; returns the unsubscribe. */
  subscribe(listener: (pending: PendingScene | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Confirms the awaited scene; false when no reset is waiting. */
  confirm(): boolean {
    if (!this.waiting) return false;
    this.waiting.confirm();
    return true;
  }

  /** Ends the wait with `reason` as its error (the episode was aborted); false when no reset is waiting. */
  cancel(reason: string): boolean {
    if (!this.waiting) return false;
    this.waiting.cancel(reason);
    return true;
  }

  /** Resolves on confirm(); rejects after `timeoutMs`, on cancel(), or when `abort()` (polled, if given) returns a reason. */
  wait(pending: PendingScene, timeoutMs: number, abort?: () => string | null, pollMs = 50): Promise<SceneConfirmed> {
    if (this.waiting) return Promise.reject(new Error("a scene reset is already waiting for a technician"));
    const startedMs = this.nowMs();
    return new Promise<SceneConfirmed>((resolve, reject) => {
      const finish = (error?: Error) => {
        if (this.waiting?.pending !== pending) return;
        clearTimeout(timer);
        clearInterval(poll);
        this.waiting = undefined;
        this.notify(null);
        if (error) reject(error);
        else resolve({ waitedMs: Math.max(0, this.nowMs() - startedMs) });
      };
      const timer = setTimeout(() => finish(new Error(`no technician confirmed the scene (POST /scene-ready or the operator station) within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
      const poll = abort && setInterval(() => {
        const reason = abort();
        if (reason) finish(new Error(reason));
      }, pollMs);
      this.waiting = { pending, confirm: () => finish(), cancel: (reason) => finish(new Error(reason)) };
      this.notify(pending);
    });
  }

  private notify(pending: PendingScene | null): void {
    for (const listener of this.listeners) {
      try {
        listener(pending);
      } catch (error) {
        // A listener's failure must not leave the reset hanging or resolve it twice.
        console.error(`scene-ready gate: a listener failed: ${(error as Error).message}`);
      }
    }
  }
}
