/**
 * The runner's side of an intervention a person performs (InterventionGate): it opens the offer when
 * the stall detector fires or the scripted time comes, notices each step whether the person pressed
 * Intervene (then the runner holds the arm and calls `help`), and closes a standing offer when the
 * episode ends. What the person is asked to do comes from the episode's reset plan: the declared
 * poses of the task objects and the arm's home (`interventionSteps`).
 *
 * On a simulated cell in operator mode the world has no hands: `worldHands` (the simulator's own
 * Intervention) applies what the person was asked to do when they press Done, as the simulator does
 * for its own nudges. A real cell passes none: the person's hands already did it.
 */
import type { Intervention, InterventionKind, ResetPlan } from "../hardware/types.js";
import type { EpisodeEvent } from "./event-detector.js";
import type { InterventionGate } from "./intervention-gate.js";
import { STALL_WINDOW_S } from "./stall-detector.js";

/** One intervention as /meta `interventions` lists it (wire names); `by` and the rest only for a person's. */
export interface InterventionRecord {
  t_s: number;
  kind: InterventionKind;
  detail: string;
  duration_s: number;
  /** "operator": a person at the station (pressed Intervene, then Done). Absent: the simulator's own nudge. */
  by?: "operator";
  /** Episode seconds when the person was asked (the stall, or the scripted time). */
  offered_t_s?: number;
  /** Episode seconds when they pressed Done (t_s is when they pressed Intervene). */
  end_t_s?: number;
  /** Wall seconds from the offer to Intervene. */
  waited_s?: number;
  /** Wall clock of Intervene and Done (ISO 8601). */
  started_at?: string;
  ended_at?: string;
}

const mm = (m: number) => `${Math.round(m * 1000)} mm`;
const deg = (rad: number) => `${Math.round((rad * 180) / Math.PI)}°`;

/** What the person is asked to do, in words, from the episode's reset plan. */
export function interventionSteps(kind: InterventionKind, plan: ResetPlan): { what: string; steps: string[] } {
  const objects = Object.entries(plan.objects)
    .map(([name, o]) => `${name} (${o.object}) to x ${mm(o.positionM[0])}, y ${mm(o.positionM[1])}, yaw ${deg(o.yawRad)}`);
  const what = kind === "on_stall"
    ? `The policy stalled: nothing moved for ${STALL_WINDOW_S} s and the task is not done. Help it on.`
    : "Scripted intervention (the run declared interventions: scripted): put the scene back as planned.";
  return {
    what,
    steps: [
      "Press Intervene: the policy pauses and the arm holds where it is (torque stays on; the e-stop still works).",
      ...(objects.length > 0 ? [`Put each task object back on its planned pose: ${objects.join("; ")}.`] : []),
      "Free the gripper if anything is caught, and keep your hands clear of the arm's path.",
      "Step back and press Done: the policy goes on from where the arm is.",
    ],
  };
}

export interface OperatorInterventionsOptions {
  gate: InterventionGate;
  episodeId: string;
  plan: ResetPlan;
  /** The episode's clock: seconds since the control loop began. */
  elapsedS: () => number;
  /** Simulated cells: the world applies what the person did when they press Done. */
  worldHands?: Intervention;
  nowMs?: () => number;
}

export class OperatorInterventions {
  /** Offers opened this episode (each stall or the scripted time). */
  offers = 0;
  private open: { kind: InterventionKind; tS: number; answer?: "pressed" | "lapsed" | "withdrawn"; waitedMs?: number } | undefined;
  private readonly nowMs: () => number;

  constructor(private readonly o: OperatorInterventionsOptions) {
    this.nowMs = o.nowMs ?? Date.now;
  }

  /** Whether an offer stands (offered or holding): no new one opens meanwhile. */
  get standing(): boolean {
    return this.open !== undefined;
  }

  /** The person pressed Intervene: hold the arm, then call `help`. */
  get pressed(): boolean {
    return this.open?.answer === "pressed";
  }

  /** Asks for a person; returns the event to record. The policy keeps running until they press Intervene. */
  offer(kind: InterventionKind, tS: number): EpisodeEvent {
    const { what, steps } = interventionSteps(kind, this.o.plan);
    const open: NonNullable<typeof this.open> = { kind, tS };
    this.open = open;
    this.offers += 1;
    void this.o.gate.open({ episodeId: this.o.episodeId, kind, tS, what, steps }).then((answer) => {
      open.answer = answer.answer;
      if (answer.answer === "pressed") open.waitedMs = answer.waitedMs;
    });
    return { tS, name: `intervention_offered:${kind}`, detail: `${what} Asked a person at the operator station (the offer stands ${Math.round(this.o.gate.offerTimeoutMs / 1000)} s).` };
  }

  /** An offer that lapsed since the last step, as its event (the episode went on untouched); else undefined. */
  takeLapsed(tS: number): EpisodeEvent | undefined {
    if (this.open?.answer !== "lapsed") return undefined;
    const { kind } = this.open;
    this.open = undefined;
    return { tS, name: `intervention_unanswered:${kind}`, detail: `nobody pressed Intervene within ${Math.round(this.o.gate.offerTimeoutMs / 1000)} s; the episode goes on untouched` };
  }

  /**
   * The arm is held (the caller wrote goal = present position): waits for Done, lets the simulated
   * world apply the person's hands, and returns the record. Rejects when the episode is aborted or
   * nobody presses Done within the gate's hold time; the caller ends the attempt then.
   */
  async help(signal: AbortSignal): Promise<{ record: InterventionRecord; event: EpisodeEvent; heldS: number }> {
    const open = this.open!;
    const startS = this.o.elapsedS();
    const startedMs = this.nowMs();
    try {
      const { note } = await this.o.gate.held(signal);
      const world = this.o.worldHands ? await this.o.worldHands.intervene(open.kind, this.o.plan) : undefined;
      const endS = this.o.elapsedS();
      const detail = [`a person helped at the operator station${note ? `: ${note}` : ""}`, world ? `the simulated world: ${world.detail}` : ""].filter(Boolean).join("; ");
      const record: InterventionRecord = {
        t_s: round(startS), kind: open.kind, detail, duration_s: round(endS - startS), by: "operator", offered_t_s: round(open.tS), end_t_s: round(endS),
        waited_s: round((open.waitedMs ?? 0) / 1000), started_at: new Date(startedMs).toISOString(), ended_at: new Date(this.nowMs()).toISOString(),
      };
      // The policy's time budget leaves out the hold (the person's time), not what the world's hands took.
      const heldS = Math.max(0, endS - startS - (world?.durationS ?? 0));
      return { record, event: { tS: startS, name: `intervention:${open.kind}`, detail }, heldS };
    } finally {
      this.open = undefined;
    }
  }

  /** Closes a standing offer at the episode's end; its event when nobody had come. */
  close(tS: number): EpisodeEvent | undefined {
    const open = this.open;
    this.open = undefined;
    this.o.gate.withdraw();
    if (!open || open.answer === "pressed") return undefined;
    return { tS, name: `intervention_unanswered:${open.kind}`, detail: "the episode ended before anyone pressed Intervene" };
  }
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
