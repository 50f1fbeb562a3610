/**
 * The simulated servo bus. Like a real cell, the e-stop cuts motor power in hardware: while it is
 * pressed the joints are limp whatever the agent asks; on release, torque returns to the agent's
 * last `setTorque` choice.
 */
import type { JointState, MotorBus } from "../../cell-agent/hardware/types.js";
import type { SimWorld } from "../world/sim-world.js";
import type { SimEstopInput } from "./sim-estop-input.js";

export class SimMotorBus implements MotorBus {
  readonly jointNames: readonly string[];
  private torqueWanted = true;

  constructor(private readonly world: SimWorld, private readonly firmware: string, private readonly estop: SimEstopInput) {
    this.jointNames = world.embodiment.jointNames;
    estop.onTrigger(() => this.apply());
  }

  async readFirmware(): Promise<string> {
    return this.firmware;
  }

  async readState(): Promise<JointState> {
    this.apply();
    return this.world.measuredJoints();
  }

  async writeGoalPositions(positionRad: readonly number[]): Promise<void> {
    this.apply();
    this.world.setGoals(positionRad);
  }

  async setTorque(enabled: boolean): Promise<void> {
    this.torqueWanted = enabled;
    this.apply();
  }

  private apply(): void {
    this.world.setTorque(this.torqueWanted && !this.estop.isPressed());
  }
}
