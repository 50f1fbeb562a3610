/**
 * A LeRobot calibration file for an SO-101 (or SO-100) follower, as LeRobot writes it to
 * ~/.cache/huggingface/lerobot/calibration/robots/so101_follower/<id>.json (draccus dump of
 * `dict[str, MotorCalibration]`, src/lerobot/robots/robot.py `_save_calibration`):
 *
 *   { "shoulder_pan": { "id": 1, "drive_mode": 0, "homing_offset": -1470, "range_min": 758, "range_max": 3292 },
 *     ..., "gripper": { ... } }
 *
 * `homing_offset` is what LeRobot wrote to each servo's Homing_Offset register (Feetech:
 * Present_Position = Actual_Position - Homing_Offset), so positions the servo reports are already
 * in the frame `range_min`/`range_max` were recorded in. The conversion to and from LeRobot's units
 * is lerobot-units.ts.
 */
import { readFileSync } from "node:fs";

/** The SO-101 follower's motors in LeRobot's order (SOFollower.__init__: ids 1..6). */
export const SO101_LEROBOT_MOTORS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"] as const;

/** One motor's `MotorCalibration` (src/lerobot/motors/motors_bus.py). Wire names kept: it is LeRobot's file. */
export interface LerobotMotorCalibration {
  id: number;
  drive_mode: number;
  homing_offset: number;
  range_min: number;
  range_max: number;
}

export type LerobotCalibration = Record<(typeof SO101_LEROBOT_MOTORS)[number], LerobotMotorCalibration>;

const FIELDS = ["id", "drive_mode", "homing_offset", "range_min", "range_max"] as const;

/** STS3215 resolution (feetech/tables.py MODEL_RESOLUTION["sts3215"] = 4096): positions are 0..4095. */
export const STS3215_RESOLUTION = 4096;

/** A file that is not a LeRobot SO-101 calibration; the message names the field and what to fix. */
export class LerobotCalibrationError extends Error {
  constructor(source: string, detail: string) {
    super(`LeRobot calibration ${source}: ${detail}`);
    this.name = "LerobotCalibrationError";
  }
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * Checks parsed JSON: exactly the six SO-101 motors, each with the five integer fields, ids 1..6 as
 * LeRobot assigns them, drive_mode 0 or 1, range_min < range_max within 0..4095, and a homing
 * offset that fits Feetech's sign-magnitude Homing_Offset (sign bit 11: |offset| <= 2047).
 */
export function parseLerobotCalibration(json: unknown, source = "(inline)"): LerobotCalibration {
  const fail = (detail: string): never => {
    throw new LerobotCalibrationError(source, detail);
  };
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    fail(`must be a JSON object keyed by motor name (${SO101_LEROBOT_MOTORS.join(", ")}); got ${shown(json)}`);
  }
  const root = json as Record<string, unknown>;
  for (const key of Object.keys(root)) {
    if (!(SO101_LEROBOT_MOTORS as readonly string[]).includes(key)) fail(`unknown motor "${key.slice(0, 40)}"; an SO-101 follower has ${SO101_LEROBOT_MOTORS.join(", ")}`);
  }
  const out = {} as LerobotCalibration;
  SO101_LEROBOT_MOTORS.forEach((motor, index) => {
    const entry = root[motor];
    if (entry === undefined) fail(`motor ${motor} is missing; an SO-101 follower calibration has ${SO101_LEROBOT_MOTORS.join(", ")}`);
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) fail(`${motor} must be an object {${FIELDS.join(", ")}}; got ${shown(entry)}`);
    const m = entry as Record<string, unknown>;
    for (const key of Object.keys(m)) if (!(FIELDS as readonly string[]).includes(key)) fail(`${motor}: unknown field "${key.slice(0, 40)}" (LeRobot's MotorCalibration has ${FIELDS.join(", ")})`);
    const values = {} as LerobotMotorCalibration;
    for (const field of FIELDS) {
      const value = m[field];
      if (typeof value !== "number" || !Number.isInteger(value)) fail(`${motor}.${field} must be an integer; got ${shown(value)}`);
      values[field] = value as number;
    }
    if (values.id !== index + 1) fail(`${motor}.id must be ${index + 1} (LeRobot's SO-101 motor ids are 1..6 in the order ${SO101_LEROBOT_MOTORS.join(", ")}); got ${values.id}`);
    if (values.drive_mode !== 0 && values.drive_mode !== 1) fail(`${motor}.drive_mode must be 0 (normal) or 1 (inverted); got ${values.drive_mode}`);
    if (Math.abs(values.homing_offset) > 2047) fail(`${motor}.homing_offset must be -2047..2047 (the STS3215's sign-magnitude Homing_Offset, sign bit 11); got ${values.homing_offset}`);
    for (const field of ["range_min", "range_max"] as const) {
      if (values[field] < 0 || values[field] > STS3215_RESOLUTION - 1) fail(`${motor}.${field} must be 0..${STS3215_RESOLUTION - 1} (STS3215 positions); got ${values[field]}`);
    }
    if (values.range_min >= values.range_max) fail(`${motor}: range_min (${values.range_min}) must be below range_max (${values.range_max}); record the range of motion again with lerobot-calibrate`);
    out[motor] = values;
  });
  return out;
}

/** Reads and checks a calibration file; errors name the file and the field. */
export function loadLerobotCalibration(path: string): LerobotCalibration {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    throw new LerobotCalibrationError(path, `cannot read the file (${(cause as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new LerobotCalibrationError(path, `not valid JSON (${(cause as Error).message})`);
  }
  return parseLerobotCalibration(json, path);
}
