/** Simulated gripper sensor, wrist force/torque sensor and motion capture over one SimWorld. */
import type { GripperSensor, MocapSource, ObjectPose, Wrench, WristForceTorque } from "../../cell-agent/hardware/types.js";
import type { SimWorld } from "../world/sim-world.js";

export class SimGripperSensor implements GripperSensor {
  constructor(private readonly world: SimWorld) {}

  async read(): Promise<{ tNs: bigint; opening: number; holding: boolean }> {
    const opening = Math.min(1, Math.max(0, this.world.opening() + this.world.sensorRandom.gaussian(0.003)));
    return { tNs: this.world.tNs, opening, holding: this.world.holding() };
  }
}

/** Lever from the sensor to the fingertip point, metres: contact forces there make torques. */
const FT_LEVER_M = 0.1;

export class SimWristForceTorque implements WristForceTorque {
  constructor(private readonly world: SimWorld) {}

  async read(): Promise<Wrench> {
    const noise = () => this.world.sensorRandom.gaussian(0.05);
    const [fx, fy, fz] = this.world.contactForceN;
    const forceN: [number, number, number] = [fx + noise(), fy + noise(), fz + noise()];
    // Force at the fingertip, sensor FT_LEVER_M above it: tau = r x F with r = (0, 0, -lever).
    const torqueNm: [number, number, number] = [FT_LEVER_M * fy + noise() * 0.01, -FT_LEVER_M * fx + noise() * 0.01, noise() * 0.01];
    return { tNs: this.world.tNs, forceN, torqueNm };
  }
}

export class SimMocapSource implements MocapSource {
  constructor(private readonly world: SimWorld) {}

  /** Poses of every object and of the fingertip ("gripper"), with 0.2 mm marker noise. */
  async readPoses(): Promise<{ tNs: bigint; poses: ObjectPose[] }> {
    const poses = this.world.poses().map((pose) => ({
      ...pose,
      positionM: pose.positionM.map((v) => v + this.world.sensorRandom.gaussian(0.0002)) as [number, number, number],
    }));
    return { tNs: this.world.tNs, poses };
  }
}
