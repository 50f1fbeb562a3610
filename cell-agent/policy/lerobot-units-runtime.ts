/**
 * Policies that act or observe in LeRobot's SO-101 units (`action_space.units: "lerobot"`,
 * `observation_contract.units: "lerobot"`): this runtime starts them through the cell's other
 * runtimes and converts at the session's edge, so the control loop, the bus and the recording stay
 * in radians. Joint positions shown to the policy become LeRobot units (velocities stay rad/s);
 * its actions are read as LeRobot units. Everything else passes through untouched.
 */
import type { Observation, PolicyImagePin, PolicyRobot, PolicyRuntime, PolicySession, PolicyStartContext } from "../hardware/types.js";

/** The conversions one policy needs (lerobot-joint-frame.ts `So101LerobotFrame`). */
export interface LerobotFrame {
  actionToRad(values: readonly number[]): number[];
  stateFromRad(positionRad: readonly number[]): number[];
}

/**
 * The frame for a policy's `use_degrees`; throws an Error in plain words when the cell cannot
 * convert (no LeRobot calibration imported, not an SO-101 on a servo bus).
 */
export type LerobotFrameSource = (useDegrees: boolean) => Promise<LerobotFrame>;

interface Units {
  action: boolean;
  observation: boolean;
  useDegrees: boolean;
}

function unitsOf(policy: Record<string, unknown>): Units {
  const actionSpace = (policy.action_space ?? {}) as { units?: unknown; use_degrees?: unknown };
  const contract = (policy.observation_contract ?? {}) as { units?: unknown };
  return {
    action: actionSpace.units === "lerobot",
    observation: contract.units === "lerobot",
    // LeRobot's SOFollowerConfig.use_degrees defaults to True.
    useDegrees: actionSpace.use_degrees !== false,
  };
}

class LerobotUnitsSession implements PolicySession {
  constructor(private readonly inner: PolicySession, private readonly frame: LerobotFrame, private readonly units: Units) {}

  reset(info: { seed: number; instruction?: string; controlRateHz: number }): Promise<void> {
    return this.inner.reset(info);
  }

  async act(observation: Observation): Promise<number[]> {
    const shown = this.units.observation && observation.jointPositionsRad
      ? { ...observation, jointPositionsRad: this.frame.stateFromRad(observation.jointPositionsRad) }
      : observation;
    const action = await this.inner.act(shown);
    return this.units.action ? this.frame.actionToRad(action) : action;
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** The wrapped session's image pin (a container policy), so the episode's meta still records it. */
  get image(): PolicyImagePin | undefined {
    return this.inner.image;
  }
}

export class LerobotUnitsPolicyRuntime implements PolicyRuntime {
  constructor(private readonly inner: PolicyRuntime, private readonly frames: LerobotFrameSource) {}

  available(): string[] {
    return this.inner.available();
  }

  async start(policy: Record<string, unknown>, robot: PolicyRobot, context?: PolicyStartContext): Promise<PolicySession> {
    const units = unitsOf(policy);
    // The context (the run, for a warm container kept across its episodes) goes on to the wrapped runtime.
    if (!units.action && !units.observation) return this.inner.start(policy, robot, context);
    // Checked before the policy starts: a cell that cannot convert must not start it.
    const frame = await this.frames(units.useDegrees);
    return new LerobotUnitsSession(await this.inner.start(policy, robot, context), frame, units);
  }
}
