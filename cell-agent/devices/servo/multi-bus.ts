/**
 * `MultiServoBus`: one MotorBus over several serial servo buses, for robots whose joints hang on more
 * than one adapter (ALOHA: each follower arm on its own Dynamixel bus). The robot's joint order maps to
 * (bus, position on that bus); every control step reads and writes all buses at once (one SYNC_READ /
 * SYNC_WRITE per bus, the buses in parallel: each is its own serial line), and the results are put back
 * in the robot's order.
 *
 * Safety: torque off goes to every bus at once and is awaited on all of them, even when one fails (an
 * e-stop must not stop at the first bus that throws); torque on that fails on any bus turns torque off
 * on all, so no arm is left live while the agent believes the robot is off.
 */
import type { JointState, MotorBus } from "../../hardware/types.js";
import type { ServoBusCounters } from "./servo-transport.js";
import { ServoBusError } from "./servo-transport.js";

/** What a bus of a MultiServoBus must offer: a SerialServoBus does. */
export interface MemberBus extends MotorBus {
  close(): Promise<void>;
  counters?(): ServoBusCounters;
  servoStatus?(): Record<string, string>;
}

export interface NamedBus {
  /** The bus's name in messages and metrics, e.g. "left". */
  name: string;
  bus: MemberBus;
}

export class MultiServoBus implements MotorBus {
  readonly jointNames: readonly string[];
  /** Per robot joint: which bus, and its index in that bus's joint order. */
  private readonly where: Array<{ bus: number; index: number }>;

  /** `jointNames`: the robot's joint order; every joint must be on exactly one bus. */
  constructor(jointNames: readonly string[], readonly buses: readonly NamedBus[]) {
    if (buses.length === 0) throw new RangeError("a multi-bus robot needs at least one bus");
    const owner = new Map<string, { bus: number; index: number }>();
    buses.forEach((member, b) =>
      member.bus.jointNames.forEach((joint, index) => {
        const previous = owner.get(joint);
        if (previous) throw new RangeError(`joint ${joint} is on two buses, ${buses[previous.bus].name} and ${member.name}; give each joint one bus`);
        owner.set(joint, { bus: b, index });
      }),
    );
    const missing = jointNames.filter((joint) => !owner.has(joint));
    if (missing.length) throw new RangeError(`joint(s) ${missing.join(", ")} are on no bus; buses: ${buses.map((m) => `${m.name} (${m.bus.jointNames.join(", ")})`).join("; ")}`);
    const extra = [...owner.keys()].filter((joint) => !jointNames.includes(joint));
    if (extra.length) throw new RangeError(`bus joint(s) ${extra.join(", ")} are not joints of this robot (${jointNames.join(", ")})`);
    this.jointNames = [...jointNames];
    this.where = jointNames.map((joint) => owner.get(joint)!);
  }

  /** Each bus's firmware; buses that differ are joined with "/" (as one bus joins differing servos). */
  async readFirmware(): Promise<string> {
    const versions = await Promise.all(this.buses.map((m) => m.bus.readFirmware()));
    return [...new Set(versions.flatMap((v) => v.split("/")))].join("/");
  }

  async readState(): Promise<JointState> {
    const states = await Promise.all(this.buses.map((m) => m.bus.readState()));
    const pick = (field: "positionRad" | "velocityRadS" | "currentA" | "temperatureC") => this.where.map((w) => states[w.bus][field][w.index]);
    // The reading is as old as its oldest bus.
    const tNs = states.reduce((t, s) => (s.tNs < t ? s.tNs : t), states[0].tNs);
    return { tNs, positionRad: pick("positionRad"), velocityRadS: pick("velocityRadS"), currentA: pick("currentA"), temperatureC: pick("temperatureC") };
  }

  async writeGoalPositions(positionRad: readonly number[]): Promise<void> {
    if (positionRad.length !== this.jointNames.length) {
      throw new RangeError(`writeGoalPositions needs ${this.jointNames.length} positions (${this.jointNames.join(", ")}); got ${positionRad.length}`);
    }
    const perBus = this.buses.map((m) => new Array<number>(m.bus.jointNames.length));
    this.where.forEach((w, i) => (perBus[w.bus][w.index] = positionRad[i]));
    await this.everyBus("write goals", (m, b) => m.bus.writeGoalPositions(perBus[b]));
  }

  async setTorque(enabled: boolean): Promise<void> {
    if (!enabled) {
      await this.everyBus("torque off", (m) => m.bus.setTorque(false));
      return;
    }
    try {
      await this.everyBus("torque on", (m) => m.bus.setTorque(true));
    } catch (error) {
      await this.everyBus("torque off after a failed torque on", (m) => m.bus.setTorque(false)).catch(() => undefined);
      throw error;
    }
  }

  /** The oldest calibration of any bus. */
  async readCalibrationAgeS(): Promise<number> {
    const ages = await Promise.all(this.buses.map((m) => (m.bus.readCalibrationAgeS ? m.bus.readCalibrationAgeS() : Promise.reject(new ServoBusError(`bus ${m.name} has no calibration age`)))));
    return Math.max(...ages);
  }

  /** Each servo's Homing_Offset register in the robot's joint order. */
  async readHomingOffsetTicks(): Promise<number[]> {
    const offsets = await Promise.all(this.buses.map((m) => (m.bus.readHomingOffsetTicks ? m.bus.readHomingOffsetTicks() : Promise.reject(new ServoBusError(`bus ${m.name} cannot read homing offsets`)))));
    return this.where.map((w) => offsets[w.bus][w.index]);
  }

  /** Counters of every bus, summed (docs/servo-buses.md, "Error counters"). */
  counters(): ServoBusCounters {
    const total: Record<string, number> = {};
    for (const m of this.buses) for (const [key, value] of Object.entries(m.bus.counters?.() ?? {})) total[key] = (total[key] ?? 0) + value;
    return total as unknown as ServoBusCounters;
  }

  /** Each bus's counters by bus name. */
  countersByBus(): Record<string, ServoBusCounters> {
    return Object.fromEntries(this.buses.filter((m) => m.bus.counters).map((m) => [m.name, m.bus.counters!()]));
  }

  servoStatus(): Record<string, string> {
    return Object.assign({}, ...this.buses.map((m) => m.bus.servoStatus?.() ?? {}));
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.buses.map((m) => m.bus.close()));
  }

  /** Runs `work` on every bus at once; waits for all, then throws naming each bus that failed. */
  private async everyBus(what: string, work: (member: NamedBus, index: number) => Promise<void>): Promise<void> {
    const results = await Promise.allSettled(this.buses.map((m, b) => work(m, b)));
    const failed = results.flatMap((r, b) => (r.status === "rejected" ? [{ name: this.buses[b].name, error: r.reason as Error }] : []));
    if (failed.length === 0) return;
    const ids = failed.flatMap((f) => (f.error instanceof ServoBusError ? f.error.ids : []));
    throw new ServoBusError(`${what} failed on bus ${failed.map((f) => `${f.name}: ${f.error.message}`).join("; bus ")}`, ids, { cause: failed[0].error });
  }
}
