/**
 * The runner's side of an intervention a person performs (InterventionGate): when the stall detector
 * fires or the scripted time comes, the runner holds the arm and calls `attend`, which offers the
 * intervention at the operator station and waits for the person (Intervene, then Done) or for the
 * offer to lapse. What the person is asked to do comes from the episode's reset plan: the declared
 * poses of the task objects (`interventionSteps`).
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
      "The policy is paused and the arm holds where it is (torque stays on; the e-stop still works). Press Intervene when you are at the cell.",
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

/** How an offer ended: a person helped (record and event), or nobody came (event only). */
export interface AttendOutcome {
  record?: InterventionRecord;
  event: EpisodeEvent;
  /** Episode seconds the policy was paused for the person (offer and hold), not what the world's hands took. */
  pausedS: number;
}

export class OperatorInterventions {
  /** Offers made this episode (each stall, or the scripted time). */
  offers = 0;
  private readonly nowMs: () => number;

  constructor(private readonly o: OperatorInterventionsOptions) {
    this.nowMs = o.nowMs ?? Date.now;
  }

  /**
   * The arm is held (the caller wrote goal = present position) and the policy gets no steps: asks the
   * station for a person, waits for Intervene (or the offer's lapse: the episode goes on untouched),
   * then for Done; a simulated world then applies what the person was asked to do. Rejects when the
   * episode is aborted, or nobody presses Done within the hold time: the caller ends the attempt.
   */
  async attend(kind: InterventionKind, tS: number, signal: AbortSignal): Promise<AttendOutcome> {
    const { gate } = this.o;
    const { what, steps } = interventionSteps(kind, this.o.plan);
    this.offers += 1;
    const onAbort = () => gate.withdraw("the episode was aborted");
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const answer = await gate.open({ episodeId: this.o.episodeId, kind, tS, what, steps });
      if (answer.answer !== "pressed") {
        const detail = answer.answer === "lapsed"
          ? `${what} Nobody pressed Intervene within ${Math.round(gate.offerTimeoutMs / 1000)} s; the episode goes on untouched`
          : `${what} The offer was withdrawn (${signal.aborted ? "the episode was aborted" : "the episode ended"})`;
        return { event: { tS, name: `intervention_unanswered:${kind}`, detail }, pausedS: Math.max(0, this.o.elapsedS() - tS) };
      }
      const startS = this.o.elapsedS();
      const startedMs = this.nowMs();
      const { note } = await gate.held(signal);
      const world = this.o.worldHands ? await this.o.worldHands.intervene(kind, this.o.plan) : undefined;
      const endS = this.o.elapsedS();
      const detail = [`a person helped at the operator station${note ? `: ${note}` : ""}`, world ? `the simulated world: ${world.detail}` : ""].filter(Boolean).join("; ");
      const record: InterventionRecord = {
        t_s: round(startS), kind, detail, duration_s: round(endS - startS), by: "operator", offered_t_s: round(tS), end_t_s: round(endS),
        waited_s: round(answer.waitedMs / 1000), started_at: new Date(startedMs).toISOString(), ended_at: new Date(this.nowMs()).toISOString(),
      };
      return { record, event: { tS: startS, name: `intervention:${kind}`, detail }, pausedS: Math.max(0, endS - tS - (world?.durationS ?? 0)) };
    } finally {
      signal.removeEventListener("abort", onAbort);
      gate.withdraw();
    }
  }
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
