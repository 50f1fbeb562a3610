/**
 * The gripper and wrist force-torque sensor of a ROS robot, read over the same rosbridge link as its
 * motors: the gripper from its joint in /joint_states, the wrench from a WrenchStamped topic.
 */
import type { GripperSensor, Wrench, WristForceTorque } from "../../hardware/types.js";
import type { RosGripperOptions, RosWristFtOptions } from "./ros-bus-options.js";
import { RosBusError } from "./ros-bus-error.js";
import type { FreshnessLimits, JointCache } from "./ros-joint-cache.js";
import type { RosLink } from "./ros-link.js";
import { parseWrenchStamped, type ParsedWrench } from "./ros-messages.js";

export interface InstrumentContext {
  link: RosLink;
  clock: { nowNs(): bigint };
  wallClockMs: () => number;
  countStale: () => void;
}

function requireConnected(link: RosLink, what: string): void {
  if (link.state !== "connected") throw new RosBusError(link.state === "closed" ? "closed" : "disconnected", `cannot read ${what}: ${link.describeOutage()}`);
}

/** Opening 0 (closed) to 1 (open) from the gripper joint; holding when |effort| reaches `holdingEffort`. */
export class RosGripper implements GripperSensor {
  constructor(
    private readonly options: RosGripperOptions,
    private readonly cache: JointCache,
    private readonly limits: FreshnessLimits,
    private readonly context: InstrumentContext,
  ) {}

  async read(): Promise<{ tNs: bigint; opening: number; holding: boolean }> {
    requireConnected(this.context.link, "the gripper");
    const { jointName, closedPositionRad, openPositionRad, holdingEffort } = this.options;
    let reading;
    try {
      [reading] = this.cache.fresh([jointName], this.context.clock.nowNs(), this.context.wallClockMs(), this.limits);
    } catch (error) {
      this.context.countStale();
      throw error;
    }
    const opening = Math.min(1, Math.max(0, (reading.positionRad - closedPositionRad) / (openPositionRad - closedPositionRad)));
    const holding = Number.isFinite(reading.effort) && Math.abs(reading.effort) >= holdingEffort;
    return { tNs: reading.receivedNs, opening, holding };
  }
}

/** The newest WrenchStamped, refused when older than the freshness limits. */
export class RosWristForceTorque implements WristForceTorque {
  private latest: { wrench: ParsedWrench; receivedNs: bigint } | null = null;

  constructor(
    private readonly options: RosWristFtOptions,
    private readonly limits: FreshnessLimits,
    rate: { throttleRateMs: number; queueLength: number },
    private readonly context: InstrumentContext,
  ) {
    context.link.subscribe(options.topic, options.type, (msg) => {
      const parsed = parseWrenchStamped(msg);
      if (!parsed.ok) context.link.malformed(`${options.topic}: ${parsed.reason}`);
      else this.latest = { wrench: parsed.value, receivedNs: context.clock.nowNs() };
    }, rate);
  }

  async read(): Promise<Wrench> {
    requireConnected(this.context.link, this.options.topic);
    const latest = this.latest;
    const nowNs = this.context.clock.nowNs();
    const ageMs = latest ? Number(nowNs - latest.receivedNs) / 1e6 : Infinity;
    const lagMs = latest?.wrench.stampMs != null ? this.context.wallClockMs() - latest.wrench.stampMs : 0;
    if (!latest || ageMs > this.limits.maxStateAgeMs || (this.limits.maxStampLagMs !== null && lagMs > this.limits.maxStampLagMs)) {
      this.context.countStale();
      const age = latest ? `${Math.round(ageMs)} ms old` : "never received";
      throw new RosBusError("stale", `${this.options.topic} is ${age} (limit maxStateAgeMs=${this.limits.maxStateAgeMs}); is the force-torque driver publishing?`);
    }
    return { tNs: latest.receivedNs, forceN: latest.wrench.forceN, torqueNm: latest.wrench.torqueNm };
  }
}
