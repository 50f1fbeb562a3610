/**
 * Joint radians (Assay's frame, from the cell's servo calibration) <-> LeRobot units (from the
 * arm's imported LeRobot calibration), through the servo ticks both calibrations describe.
 *
 * An action in LeRobot units becomes the Goal_Position ticks LeRobot's own driver would write
 * (`_unnormalize`), then the radians that the cell's SerialServoBus turns back into exactly those
 * ticks (it rounds, and still clamps to the cell's calibrated range). A state in radians becomes the
 * Present_Position ticks the servo reported, then LeRobot's `_normalize` of them.
 */
import { ControlTable, controlTable, radToTicks } from "./control-tables.js";
import type { Calibration, JointCalibration } from "./calibration.js";
import { jointRadFromTicks } from "./calibration.js";
import { LerobotCalibration, SO101_LEROBOT_MOTORS } from "./lerobot-calibration.js";
import { So101LerobotUnits } from "./lerobot-units.js";

interface Joint {
  calibration: JointCalibration;
  table: ControlTable;
}

export class So101LerobotFrame {
  private readonly joints: Joint[];
  private readonly units: So101LerobotUnits;

  /**
   * `jointNames` is the robot's order (the catalog's so101 joints, LeRobot's motor names);
   * `servo` the cell's own calibration of the same servos.
   */
  constructor(lerobot: LerobotCalibration, servo: Calibration, jointNames: readonly string[], useDegrees: boolean) {
    if (jointNames.length !== SO101_LEROBOT_MOTORS.length || jointNames.some((name, i) => name !== SO101_LEROBOT_MOTORS[i])) {
      throw new Error(`LeRobot units need the SO-101's joints ${SO101_LEROBOT_MOTORS.join(", ")} in that order; this robot has ${jointNames.join(", ")}`);
    }
    this.joints = jointNames.map((name) => {
      const calibration = servo.joints[name];
      if (!calibration) throw new Error(`the servo calibration has no joint ${name}`);
      if (calibration.id !== lerobot[name as keyof LerobotCalibration].id) {
        throw new Error(`joint ${name} is servo id ${calibration.id} in the cell's calibration but id ${lerobot[name as keyof LerobotCalibration].id} in the LeRobot calibration; import the calibration of this arm`);
      }
      return { calibration, table: controlTable(calibration.model) };
    });
    this.units = new So101LerobotUnits(lerobot, useDegrees);
  }

  /** An action in LeRobot units -> joint goals in radians. */
  actionToRad(values: readonly number[]): number[] {
    const ticks = this.units.toTicks(values);
    return ticks.map((t, i) => jointRadFromTicks(this.joints[i].calibration, this.joints[i].table, t));
  }

  /** Measured joint positions in radians -> `observation.state` in LeRobot units. */
  stateFromRad(positionRad: readonly number[]): number[] {
    const ticks = positionRad.map((rad, i) => {
      const { calibration, table } = this.joints[i];
      const sign = calibration.driveMode === 1 ? -1 : 1;
      return Math.round(calibration.homingOffsetTicks + sign * radToTicks(rad, table));
    });
    return this.units.fromTicks(ticks);
  }
}
