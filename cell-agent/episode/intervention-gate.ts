/**
 * Where an episode waits for a person's hands (runs with `interventions` on_stall or scripted, on a
 * cell where a person answers: a real cell, or a simulated one in operator mode). When the stall
 * detector fires (or the scripted time comes) the runner stops stepping the policy, holds the arm where
 * it is and opens an offer; the cell reports an Attention "intervene". The person presses "Intervene"
 * at the operator station when they are at the cell (`holding`: the arm stays held while they help) and
 * "Done" when they step back; the episode then goes on. An offer nobody takes within `offerTimeoutMs`
 * lapses and the episode goes on untouched; a hold with no "Done" within `holdTimeoutMs` ends the
 * attempt (the scene is in a state nobody vouches for).
 *
 * The phases are one string union with one transition function (`nextInterventionPhase`), which
 * throws on an illegal move; the gate is the only caller.
 */
import type { InterventionKind } from "../hardware/types.js";

/** idle: nothing asked; offered: a person is asked to come (the policy paused); holding: they are helping. */
export type InterventionPhase = "idle" | "offered" | "holding";

export type InterventionEvent =
  | "offer"     // the runner paused the policy and asks for a person (stall, or the scripted time)
  | "press"     // the person pressed Intervene: they are at the cell, the arm stays held
  | "done"      // the person pressed Done: the episode goes on
  | "lapse"     // nobody pressed Intervene within the offer's time
  | "withdraw"; // the episode ended or was aborted

const MOVES: Record<InterventionPhase, Partial<Record<InterventionEvent, InterventionPhase>>> = {
  idle: { offer: "offered", withdraw: "idle" },
  offered: { press: "holding", lapse: "idle", withdraw: "idle" },
  holding: { done: "idle", withdraw: "idle" },
};

export function nextInterventionPhase(phase: InterventionPhase, event: InterventionEvent): InterventionPhase {
  const next = MOVES[phase][event];
  if (!next) throw new Error(`an intervention cannot ${event} while ${phase}`);
  return next;
}

/** What the person is asked to do (the Attention's payload, wire names via `interventionAttention`). */
export interface InterventionRequest {
  episodeId: string;
  kind: InterventionKind;
  /** Episode seconds when the stall fired (or the scripted time came). */
  tS: number;
  /** One line: why a person is needed. */
  what: string;
  /** What to do, step by step, in words. */
  steps: string[];
}

export interface InterventionOffer extends InterventionRequest {
  /** Wall clock (Unix ms) of the offer. */
  sinceMs: number;
  phase: Exclude<InterventionPhase, "idle">;
  /** Wall clock (Unix ms) when the person pressed Intervene; undefined while offered. */
  heldSinceMs?: number;
}

/** How an offer ended for the runner: the person came (pressed Intervene), or nobody did. */
export type OfferAnswer = { answer: "pressed"; waitedMs: number } | { answer: "lapsed" | "withdrawn" };

export interface InterventionGateOptions {
  /** Wall ms an offer stands before it lapses (default 60000). */
  offerTimeoutMs?: number;
  /** Wall ms the arm may be held without Done before the attempt ends (default 600000). */
  holdTimeoutMs?: number;
  /** Wall clock, ms; default Date.now. */
  nowMs?: () => number;
}

export class InterventionGate {
  private phase: InterventionPhase = "idle";
  private offer: InterventionOffer | undefined;
  private answerOffer: ((answer: OfferAnswer) => void) | undefined;
  private finishHold: ((result: { ok: true; note: string } | { ok: false; reason: string }) => void) | undefined;
  private offerTimer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(offer: InterventionOffer | null) => void>();
  readonly offerTimeoutMs: number;
  readonly holdTimeoutMs: number;
  private readonly nowMs: () => number;

  constructor(options: InterventionGateOptions = {}) {
    this.offerTimeoutMs = options.offerTimeoutMs ?? 60_000;
    this.holdTimeoutMs = options.holdTimeoutMs ?? 600_000;
    if (!(this.offerTimeoutMs > 0) || !(this.holdTimeoutMs > 0)) {
      throw new Error(`intervention offerTimeoutMs and holdTimeoutMs must be positive milliseconds; got ${options.offerTimeoutMs}, ${options.holdTimeoutMs}`);
    }
    this.nowMs = options.nowMs ?? Date.now;
  }

  /** The open offer (offered or holding), or null. */
  get current(): InterventionOffer | null {
    return this.offer ?? null;
  }

  /** Calls `listener` with the offer whenever it opens or changes phase, and with null when it ends; returns the unsubscribe. */
  subscribe(listener: (offer: InterventionOffer | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Asks for a person; the promise says whether one came (pressed Intervene) before the offer lapsed or was withdrawn. */
  open(request: InterventionRequest): Promise<OfferAnswer> {
    this.phase = nextInterventionPhase(this.phase, "offer");
    const sinceMs = this.nowMs();
    this.offer = { ...request, sinceMs, phase: "offered" };
    return new Promise<OfferAnswer>((resolve) => {
      this.answerOffer = resolve;
      this.offerTimer = setTimeout(() => this.end("lapse", { answer: "lapsed" }), this.offerTimeoutMs);
      this.notify();
    });
  }

  /** The person pressed Intervene for `episodeId`; false when no offer of that episode stands. */
  press(episodeId: string): boolean {
    if (this.phase !== "offered" || this.offer?.episodeId !== episodeId) return false;
    this.phase = nextInterventionPhase(this.phase, "press");
    clearTimeout(this.offerTimer);
    const heldSinceMs = this.nowMs();
    this.offer = { ...this.offer, phase: "holding", heldSinceMs };
    const answer = this.answerOffer;
    this.answerOffer = undefined;
    this.notify();
    answer?.({ answer: "pressed", waitedMs: Math.max(0, heldSinceMs - this.offer.sinceMs) });
    return true;
  }

  /**
   * While holding: resolves with the person's note when they press Done; rejects when `signal` aborts
   * (e-stop, cancel, link loss) or after `holdTimeoutMs` without Done.
   */
  held(signal: AbortSignal): Promise<{ note: string }> {
    if (this.phase !== "holding") return Promise.reject(new Error(`no intervention is holding the arm (phase ${this.phase})`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.end("withdraw", undefined, `nobody pressed Done within ${Math.round(this.holdTimeoutMs / 1000)} s of pressing Intervene`), this.holdTimeoutMs);
      const onAbort = () => this.end("withdraw", undefined, "the episode was aborted while a person was helping");
      signal.addEventListener("abort", onAbort, { once: true });
      this.finishHold = (result) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        if (result.ok) resolve({ note: result.note });
        else reject(new Error(result.reason));
      };
      if (signal.aborted) onAbort();
    });
  }

  /** The person pressed Done for `episodeId`; false when the arm is not held for that episode. */
  done(episodeId: string, note = ""): boolean {
    if (this.phase !== "holding" || this.offer?.episodeId !== episodeId) return false;
    this.end("done", undefined, undefined, note);
    return true;
  }

  /** Ends whatever stands (the episode ended or was aborted); an open offer answers "withdrawn". */
  withdraw(reason = "the episode ended"): void {
    if (this.phase === "idle") return;
    this.end("withdraw", { answer: "withdrawn" }, reason);
  }

  private end(event: "lapse" | "done" | "withdraw", offerAnswer?: OfferAnswer, reason?: string, note = ""): void {
    if (this.phase === "idle") return;
    this.phase = nextInterventionPhase(this.phase, event);
    clearTimeout(this.offerTimer);
    const answer = this.answerOffer;
    const finish = this.finishHold;
    this.answerOffer = undefined;
    this.finishHold = undefined;
    this.offer = undefined;
    this.notify();
    if (offerAnswer) answer?.(offerAnswer);
    finish?.(event === "done" ? { ok: true, note } : { ok: false, reason: reason ?? "the intervention ended" });
  }

  private notify(): void {
    const offer = this.current;
    for (const listener of this.listeners) {
      try {
        listener(offer);
      } catch (error) {
        // A listener's failure must not leave the episode holding or resolve it twice.
        console.error(`intervention gate: a listener failed: ${(error as Error).message}`);
      }
    }
  }
}

/** The Attention "intervene" payload (`Attention.scene_json`, wire names). */
export function interventionAttention(offer: InterventionOffer): Record<string, unknown> {
  return {
    intervention: offer.kind,
    phase: offer.phase,
    what: offer.what,
    steps: offer.steps,
    t_s: Math.round(offer.tS * 1000) / 1000,
    ...(offer.heldSinceMs !== undefined ? { held_since: new Date(offer.heldSinceMs).toISOString() } : {}),
  };
}
