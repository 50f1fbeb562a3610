/**
 * LeRobot's SO-101 units, computed exactly as LeRobot's own driver does
 * (huggingface/lerobot src/lerobot/motors/motors_bus.py `MotorsBus._normalize` / `_unnormalize`,
 * with the modes src/lerobot/robots/so_follower/so_follower.py `SOFollower.__init__` assigns):
 * the five body joints in DEGREES (`use_degrees: true`, LeRobot's default) or RANGE_M100_100
 * (`use_degrees: false`, older datasets), the gripper in RANGE_0_100.
 *
 * Positions are the servo's Present_Position / Goal_Position ticks (0..4095 on the STS3215), as
 * the servo reports them after its Homing_Offset. Python's `int()` truncates toward zero; here
 * Math.trunc does the same. Clamping and drive-mode inversion follow LeRobot line for line,
 * including where LeRobot does neither (DEGREES ignores drive_mode and is not clamped).
 */
import { LerobotCalibration, LerobotMotorCalibration, SO101_LEROBOT_MOTORS, STS3215_RESOLUTION } from "./lerobot-calibration.js";

/** MotorNormMode (motors_bus.py). */
export type LerobotNormMode = "range_m100_100" | "range_0_100" | "degrees";

/** Ticks -> LeRobot units (`_normalize`). Throws, as LeRobot does, when range_min equals range_max. */
export function lerobotNormalize(calibration: LerobotMotorCalibration, mode: LerobotNormMode, ticks: number): number {
  const { range_min: min, range_max: max } = calibration;
  if (max === min) throw new RangeError(`invalid calibration for motor id ${calibration.id}: min and max are equal`);
  const driveMode = calibration.drive_mode !== 0;
  const bounded = Math.min(max, Math.max(min, ticks));
  if (mode === "range_m100_100") {
    const norm = ((bounded - min) / (max - min)) * 200 - 100;
    return driveMode ? -norm : norm;
  }
  if (mode === "range_0_100") {
    const norm = ((bounded - min) / (max - min)) * 100;
    return driveMode ? 100 - norm : norm;
  }
  const mid = (min + max) / 2;
  const maxRes = STS3215_RESOLUTION - 1;
  return ((ticks - mid) * 360) / maxRes;
}

/** LeRobot units -> goal ticks (`_unnormalize`), an integer truncated toward zero. */
export function lerobotUnnormalize(calibration: LerobotMotorCalibration, mode: LerobotNormMode, value: number): number {
  if (!Number.isFinite(value)) throw new RangeError(`a LeRobot goal must be a finite number; got ${value}`);
  const { range_min: min, range_max: max } = calibration;
  if (max === min) throw new RangeError(`invalid calibration for motor id ${calibration.id}: min and max are equal`);
  const driveMode = calibration.drive_mode !== 0;
  if (mode === "range_m100_100") {
    const v = driveMode ? -value : value;
    const bounded = Math.min(100, Math.max(-100, v));
    return Math.trunc(((bounded + 100) / 200) * (max - min) + min);
  }
  if (mode === "range_0_100") {
    const v = driveMode ? 100 - value : value;
    const bounded = Math.min(100, Math.max(0, v));
    return Math.trunc((bounded / 100) * (max - min) + min);
  }
  const mid = (min + max) / 2;
  const maxRes = STS3215_RESOLUTION - 1;
  return Math.trunc((value * maxRes) / 360 + mid);
}

/** Per-motor modes of an SO-101 follower (SOFollower.__init__). */
export function so101NormModes(useDegrees: boolean): LerobotNormMode[] {
  return SO101_LEROBOT_MOTORS.map((motor) => (motor === "gripper" ? "range_0_100" : useDegrees ? "degrees" : "range_m100_100"));
}

/** Converts whole SO-101 vectors (LeRobot's motor order) between ticks and LeRobot units. */
export class So101LerobotUnits {
  private readonly motors: LerobotMotorCalibration[];
  private readonly modes: LerobotNormMode[];

  constructor(calibration: LerobotCalibration, readonly useDegrees: boolean) {
    this.motors = SO101_LEROBOT_MOTORS.map((m) => calibration[m]);
    this.modes = so101NormModes(useDegrees);
  }

  /** Present_Position ticks -> `observation.state` values. */
  fromTicks(ticks: readonly number[]): number[] {
    this.checkLength(ticks);
    return ticks.map((t, i) => lerobotNormalize(this.motors[i], this.modes[i], t));
  }

  /** An action in LeRobot units -> Goal_Position ticks. */
  toTicks(values: readonly number[]): number[] {
    this.checkLength(values);
    return values.map((v, i) => lerobotUnnormalize(this.motors[i], this.modes[i], v));
  }

  private checkLength(values: readonly number[]): void {
    if (values.length !== this.motors.length) {
      throw new RangeError(`an SO-101 takes ${this.motors.length} values (${SO101_LEROBOT_MOTORS.join(", ")}); got ${values.length}`);
    }
  }
}
