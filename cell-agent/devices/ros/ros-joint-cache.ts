/**
 * The newest reading of every joint seen on /joint_states, kept per joint because a robot may publish
 * its joints from several nodes (legs from one driver, the hand from another) into one topic.
 */
import { RosBusError } from "./ros-bus-error.js";
import type { ParsedJointState } from "./ros-messages.js";

export interface JointReading {
  positionRad: number;
  velocityRadS: number;
  effort: number;
  /** Agent clock at arrival, ns. */
  receivedNs: bigint;
  /** header.stamp, ms since the epoch, or null. */
  stampMs: number | null;
}

export interface FreshnessLimits {
  maxStateAgeMs: number;
  maxStampLagMs: number | null;
  topic: string;
}

export class JointCache {
  private readonly readings = new Map<string, JointReading>();

  update(state: ParsedJointState, receivedNs: bigint): void {
    state.names.forEach((name, i) => {
      this.readings.set(name, {
        positionRad: state.positionRad[i],
        velocityRadS: state.velocityRadS?.[i] ?? NaN,
        effort: state.effort?.[i] ?? NaN,
        receivedNs,
        stampMs: state.stampMs,
      });
    });
  }

  has(names: readonly string[]): boolean {
    return names.every((name) => this.readings.has(name));
  }

  clear(): void {
    this.readings.clear();
  }

  /**
   * The readings of `names`, in that order; throws RosBusError("stale") naming the joint and the age
   * when one is missing or too old.
   */
  fresh(names: readonly string[], nowNs: bigint, wallMs: number, limits: FreshnessLimits): JointReading[] {
    const missing = names.filter((name) => !this.readings.has(name));
    if (missing.length > 0) {
      throw new RosBusError("stale", `no ${limits.topic} reading yet for ${missing.length} joint(s): ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ", ..." : ""}; check that the robot publishes them under these names`);
    }
    const readings = names.map((name) => this.readings.get(name) as JointReading);
    readings.forEach((reading, i) => {
      const ageMs = Number(nowNs - reading.receivedNs) / 1e6;
      if (ageMs > limits.maxStateAgeMs) {
        throw new RosBusError("stale", `${limits.topic} for joint ${names[i]} is ${Math.round(ageMs)} ms old (limit maxStateAgeMs=${limits.maxStateAgeMs}); is the robot still publishing? check \`ros2 topic hz ${limits.topic}\``);
      }
      if (limits.maxStampLagMs !== null && reading.stampMs !== null) {
        const lagMs = wallMs - reading.stampMs;
        if (lagMs > limits.maxStampLagMs) {
          throw new RosBusError("stale", `${limits.topic} for joint ${names[i]} arrived ${Math.round(lagMs)} ms after its header stamp (limit maxStampLagMs=${limits.maxStampLagMs}); the link to the robot lags, or its clock is not synchronized`);
        }
      }
    });
    return readings;
  }
}
