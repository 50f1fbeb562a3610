/**
 * `cell-agent calibration import-lerobot <file.json>`: checks an SO-101 follower's LeRobot
 * calibration (lerobot-calibration.ts) and keeps a copy in the agent's data directory, where the
 * agent reads it when a policy declares LeRobot units (docs/policies.md, "LeRobot policies, unchanged").
 */
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Calibration } from "./devices/servo/calibration.js";
import { LerobotCalibration, loadLerobotCalibration, SO101_LEROBOT_MOTORS } from "./devices/servo/lerobot-calibration.js";
import { So101LerobotFrame } from "./devices/servo/lerobot-joint-frame.js";
import type { LerobotFrameSource } from "./policy/lerobot-units-runtime.js";

/** Where the imported calibration lives: `<dataDir>/calibration/lerobot-so101-follower.json`. */
export function lerobotCalibrationPath(dataDir: string): string {
  return join(dataDir, "calibration", "lerobot-so101-follower.json");
}

/**
 * Checks `file` and writes it, re-serialised, to the data directory (replacing an earlier import in
 * one rename, so a running agent never reads half a file). Returns where it went and what it holds.
 */
export function importLerobotCalibration(file: string, dataDir: string): { path: string; calibration: LerobotCalibration } {
  const calibration = loadLerobotCalibration(file);
  const path = lerobotCalibrationPath(dataDir);
  mkdirSync(join(dataDir, "calibration"), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(calibration, null, 4)}\n`);
  renameSync(temporary, path);
  return { path, calibration };
}

/** One line per motor, for the command's output. */
export function describeLerobotCalibration(calibration: LerobotCalibration): string[] {
  return SO101_LEROBOT_MOTORS.map((motor) => {
    const m = calibration[motor];
    return `  ${motor.padEnd(13)} id ${m.id}  range ${m.range_min}..${m.range_max}  homing_offset ${m.homing_offset}${m.drive_mode ? "  inverted" : ""}`;
  });
}

/**
 * The LeRobot frames of this cell, read when a policy asks for them (so an import takes effect
 * without restarting the agent). `servoCalibration` is the cell's own calibration of the arm's
 * servos, or undefined when the arm is not on a Feetech servo bus.
 */
export function lerobotFrameSource(options: {
  dataDir: string;
  robotModel: string;
  jointNames: readonly string[];
  servoCalibration: () => Calibration | undefined;
  /** The servos' Homing_Offset registers in joint order, when the bus can read them (checked against the file). */
  readHomingOffsetTicks?: () => Promise<number[]>;
}): LerobotFrameSource {
  return async (useDegrees) => {
    if (options.robotModel !== "so101") throw new Error(`LeRobot units are for an SO-101 follower; this cell is a ${options.robotModel}`);
    const servo = options.servoCalibration();
    if (!servo) throw new Error("LeRobot units need the arm on a Feetech servo bus (motors.kind \"feetech\" in the agent config)");
    const path = lerobotCalibrationPath(options.dataDir);
    if (!existsSync(path)) throw new Error(`this cell has no LeRobot calibration imported; run "cell-agent calibration import-lerobot <file.json>" with the arm's file from ~/.cache/huggingface/lerobot/calibration/robots/so101_follower/`);
    const lerobot = loadLerobotCalibration(path);
    const frame = new So101LerobotFrame(lerobot, servo, options.jointNames, useDegrees);
    if (options.readHomingOffsetTicks) checkHomingOffsets(lerobot, options.jointNames, await options.readHomingOffsetTicks());
    return frame;
  };
}

/**
 * LeRobot's positions are the servos' after their Homing_Offset (feetech.py `is_calibrated` compares
 * the registers with the file): a servo holding another offset reports other ticks, and every
 * conversion would be off by the difference.
 */
function checkHomingOffsets(lerobot: LerobotCalibration, jointNames: readonly string[], offsets: readonly number[]): void {
  const wrong = jointNames
    .map((name, i) => ({ name, servo: offsets[i], file: lerobot[name as keyof LerobotCalibration].homing_offset }))
    .filter((j) => j.servo !== j.file);
  if (wrong.length) {
    throw new Error(`the servos' Homing_Offset registers do not match the imported LeRobot calibration (${wrong.map((j) => `${j.name} reads ${j.servo}, the file says ${j.file}`).join("; ")}); the arm was recalibrated or the file is another arm's: import this arm's current file from ~/.cache/huggingface/lerobot/calibration/robots/so101_follower/`);
  }
}
