/**
 * Turns each control step's signals into named events for /events and the failure clusters:
 * gripper_closed / gripper_opened (with hysteresis), grasp_acquired / grasp_lost, contact_spike,
 * object_lifted, predicate_satisfied:<name>, stage_reached:<name>.
 */
import type { SignalFrame, TaskStatus } from "./task-monitor.js";

export interface EpisodeEvent {
  tS: number;
  name: string;
  detail: string;
}

export interface EventDetectorOptions {
  /** Nominal z of each task object, metres (an object counts as lifted 3 cm above it). */
  nominalZM: Record<string, number>;
}

/** Opening below this counts as closed, above OPEN_ABOVE as open; between, the state holds. */
const CLOSED_BELOW = 0.3;
const OPEN_ABOVE = 0.7;
export const CONTACT_SPIKE_N = 25;
const LIFT_M = 0.03;
/** A grasp lost with the gripper this far above the table is a drop, not a placement. */
const ABOVE_TABLE_M = 0.05;

export class EventDetector {
  private gripperClosed: boolean | undefined;
  private holding = false;
  private inSpike = false;
  private readonly lifted = new Set<string>();
  private readonly satisfied = new Set<string>();
  private readonly reached = new Set<string>();

  constructor(private readonly options: EventDetectorOptions) {}

  /** Events visible in this frame's physical signals. */
  fromSignals(frame: Omit<SignalFrame, "events">): EpisodeEvent[] {
    const events: EpisodeEvent[] = [];
    const at = (name: string, detail = "") => events.push({ tS: frame.tS, name, detail });
    if (frame.gripper) {
      const { opening, holding } = frame.gripper;
      if (this.gripperClosed === undefined) {
        this.gripperClosed = opening < CLOSED_BELOW;
      } else if (!this.gripperClosed && opening < CLOSED_BELOW) {
        this.gripperClosed = true;
        at("gripper_closed", `opening ${opening.toFixed(3)}`);
      } else if (this.gripperClosed && opening > OPEN_ABOVE) {
        this.gripperClosed = false;
        at("gripper_opened", `opening ${opening.toFixed(3)}`);
      }
      if (!this.holding && holding) at("grasp_acquired");
      if (this.holding && !holding && this.aboveTable(frame)) at("grasp_lost", "released above the table");
      this.holding = holding;
    }
    if (frame.ft) {
      const magnitude = Math.hypot(...frame.ft.forceN);
      if (magnitude > CONTACT_SPIKE_N && !this.inSpike) at("contact_spike", `|force| ${magnitude.toFixed(1)} N`);
      this.inSpike = magnitude > CONTACT_SPIKE_N;
    }
    for (const [name, nominalZ] of Object.entries(this.options.nominalZM)) {
      const pose = frame.poses[name];
      if (pose && !this.lifted.has(name) && pose.z > nominalZ + LIFT_M) {
        this.lifted.add(name);
        at("object_lifted", `${name} z ${pose.z.toFixed(3)} m`);
      }
    }
    return events;
  }

  /** Events from the task monitor's status after it saw a frame (first satisfaction only). */
  fromStatus(tS: number, status: TaskStatus): EpisodeEvent[] {
    const events: EpisodeEvent[] = [];
    for (const [name, p] of Object.entries(status.predicates)) {
      if (p.satisfied && !this.satisfied.has(name)) {
        this.satisfied.add(name);
        events.push({ tS, name: `predicate_satisfied:${name}`, detail: p.atS !== undefined ? `at ${p.atS.toFixed(3)} s` : "" });
      }
    }
    for (const [name, s] of Object.entries(status.stages)) {
      if (s.reached && !this.reached.has(name)) {
        this.reached.add(name);
        events.push({ tS, name: `stage_reached:${name}`, detail: s.atS !== undefined ? `at ${s.atS.toFixed(3)} s` : "" });
      }
    }
    return events;
  }

  private aboveTable(frame: Omit<SignalFrame, "events">): boolean {
    const gripper = frame.poses.gripper;
    if (gripper) return gripper.z > ABOVE_TABLE_M;
    // Without a tracked gripper, a lost grasp while any task object is still lifted is a drop.
    return Object.entries(this.options.nominalZM).some(([name, z]) => (frame.poses[name]?.z ?? z) > z + LIFT_M);
  }
}
