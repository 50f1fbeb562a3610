/**
 * The robot behind the simulated rosbridge: joints that track their position targets at a velocity
 * limit while torque is on and stay where they are while it is off, plus a firmware string and a
 * settable wrist wrench. Time only moves through `step(dtS)`, so a test can drive it exactly.
 */
import { loadFirmwarePins } from "../../firmware-pins/pins.js";

export interface SimRosRobotOptions {
  /** Joint names in the controller's order (the catalog's `joints`). Required. */
  jointNames: string[];
  /** Firmware reported by the firmware service. Required. */
  firmware: string;
  /** Velocity limit of every joint, rad/s (default 2). */
  maxVelocityRadS?: number;
  /** Start positions, rad (default all 0). */
  initialPositionRad?: number[];
  /** Gripper joint (closing lowers its position); see `gripperObstacleRad` (default none). */
  gripperJoint?: string;
}

export class SimRosRobot {
  readonly jointNames: readonly string[];
  readonly firmware: string;
  readonly maxVelocityRadS: number;
  torqueEnabled = true;
  /**
   * Where an object in the gripper stops the fingers, rad, or null for empty fingers. While the
   * target is below it the fingers stay there and push: effort 5 per rad of squeeze.
   */
  gripperObstacleRad: number | null = null;
  /** Wrist wrench the force-torque topic publishes. */
  wrench = { forceN: [0, 0, 0] as [number, number, number], torqueNm: [0, 0, 0] as [number, number, number] };
  private readonly positionRad: number[];
  private readonly velocityRadS: number[];
  private readonly effort: number[];
  private targetRad: number[];
  private readonly gripperIndex: number;

  constructor(options: SimRosRobotOptions) {
    this.jointNames = [...options.jointNames];
    this.firmware = options.firmware;
    this.maxVelocityRadS = options.maxVelocityRadS ?? 2;
    const n = this.jointNames.length;
    this.positionRad = options.initialPositionRad ? [...options.initialPositionRad] : new Array<number>(n).fill(0);
    if (this.positionRad.length !== n) throw new Error(`initialPositionRad needs ${n} values; got ${this.positionRad.length}`);
    this.velocityRadS = new Array<number>(n).fill(0);
    this.effort = new Array<number>(n).fill(0);
    this.targetRad = [...this.positionRad];
    this.gripperIndex = options.gripperJoint ? this.jointNames.indexOf(options.gripperJoint) : -1;
  }

  /** A robot of a catalog model (firmware-pins/catalog.json), e.g. "g1", "b2z1", "stretch3". */
  static forModel(modelId: string, options: Omit<SimRosRobotOptions, "jointNames" | "firmware"> & { firmware?: string } = {}): SimRosRobot {
    const model = loadFirmwarePins().models.find((m) => m.id === modelId);
    if (!model) throw new Error(`unknown robot model "${modelId}" in firmware-pins/catalog.json`);
    return new SimRosRobot({ ...options, jointNames: model.joints, firmware: options.firmware ?? model.firmwares[model.firmwares.length - 1] });
  }

  /** Position targets in `jointNames` order; ignored by the motors while torque is off, as on a real drive. */
  setTargets(targetRad: readonly number[]): void {
    if (targetRad.length !== this.jointNames.length) throw new Error(`expected ${this.jointNames.length} targets; got ${targetRad.length}`);
    this.targetRad = [...targetRad];
  }

  setTorque(enabled: boolean): void {
    this.torqueEnabled = enabled;
    // Re-enabling must not jump to a target set before torque went off.
    if (enabled) this.targetRad = [...this.positionRad];
  }

  /** Advances the joints by `dtS` seconds. */
  step(dtS: number): void {
    const maxStep = this.maxVelocityRadS * dtS;
    for (let i = 0; i < this.positionRad.length; i++) {
      if (!this.torqueEnabled) {
        this.velocityRadS[i] = 0;
        this.effort[i] = 0;
        continue;
      }
      const error = this.targetRad[i] - this.positionRad[i];
      const move = Math.max(-maxStep, Math.min(maxStep, error));
      const before = this.positionRad[i];
      this.positionRad[i] += move;
      this.effort[i] = 0.1 * error;
      const obstacle = i === this.gripperIndex ? this.gripperObstacleRad : null;
      if (obstacle !== null && this.targetRad[i] < obstacle && this.positionRad[i] <= obstacle) {
        this.positionRad[i] = Math.min(before, obstacle);
        this.effort[i] = 5 * (obstacle - this.targetRad[i]);
      }
      this.velocityRadS[i] = dtS > 0 ? (this.positionRad[i] - before) / dtS : 0;
    }
  }

  snapshot(): { positionRad: number[]; velocityRadS: number[]; effort: number[] } {
    return { positionRad: [...this.positionRad], velocityRadS: [...this.velocityRadS], effort: [...this.effort] };
  }
}
