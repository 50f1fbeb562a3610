/**
 * Per-joint servo calibration, loaded from a JSON file written by the lab (see docs/servo-buses.md):
 *
 *   { "calibratedAt": "2026-11-20T09:30:00Z",
 *     "joints": { "shoulder_pan": { "id": 1, "model": "sts3215", "homingOffsetTicks": 2048,
 *                                   "rangeMinTicks": 700, "rangeMaxTicks": 3400, "driveMode": 0 }, ... } }
 *
 * Ticks are raw servo ticks as the servo reports them. A joint is at 0 rad when the servo reads
 * `homingOffsetTicks`; driveMode 1 flips the joint's direction. Every goal is clamped to
 * [rangeMinTicks, rangeMaxTicks] before it is written.
 */
import { readFileSync } from "node:fs";
import { ControlTable, SERVO_MODELS, ServoModel, controlTable, radToTicks, ticksToRad } from "./control-tables.js";

export interface JointCalibration {
  id: number;
  model: ServoModel;
  homingOffsetTicks: number;
  rangeMinTicks: number;
  rangeMaxTicks: number;
  /** 0 normal, 1 inverted. */
  driveMode: 0 | 1;
}

export interface Calibration {
  /** When the joints were calibrated (null when the file does not say). */
  calibratedAt: Date | null;
  joints: Record<string, JointCalibration>;
}

const JOINT_KEYS = ["id", "model", "homingOffsetTicks", "rangeMinTicks", "rangeMaxTicks", "driveMode"];

function fail(source: string, message: string): never {
  throw new Error(`servo calibration ${source}: ${message}`);
}

function integer(source: string, where: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value)) fail(source, `${where} must be an integer; got ${JSON.stringify(value)}`);
  return value;
}

/** Validates parsed JSON; rejects unknown keys, duplicate ids, mixed protocols and empty ranges. */
export function parseCalibration(json: unknown, source = "(inline)"): Calibration {
  if (typeof json !== "object" || json === null || Array.isArray(json)) fail(source, "must be a JSON object with a \"joints\" object");
  const root = json as Record<string, unknown>;
  for (const key of Object.keys(root)) if (key !== "joints" && key !== "calibratedAt") fail(source, `unknown key "${key}"`);
  let calibratedAt: Date | null = null;
  if (root.calibratedAt !== undefined) {
    calibratedAt = new Date(String(root.calibratedAt));
    if (Number.isNaN(calibratedAt.getTime())) fail(source, `calibratedAt must be an ISO 8601 time; got ${JSON.stringify(root.calibratedAt)}`);
  }
  const jointsIn = root.joints;
  if (typeof jointsIn !== "object" || jointsIn === null || Array.isArray(jointsIn)) fail(source, "\"joints\" must be an object keyed by joint name");
  const joints: Record<string, JointCalibration> = {};
  const ids = new Map<number, string>();
  const protocols = new Set<string>();
  for (const [name, value] of Object.entries(jointsIn as Record<string, unknown>)) {
    if (typeof value !== "object" || value === null) fail(source, `joint ${name} must be an object`);
    const j = value as Record<string, unknown>;
    for (const key of Object.keys(j)) if (!JOINT_KEYS.includes(key)) fail(source, `joint ${name}: unknown key "${key}" (known: ${JOINT_KEYS.join(", ")})`);
    const id = integer(source, `joint ${name}.id`, j.id);
    if (id < 0 || id > 252) fail(source, `joint ${name}.id must be 0..252; got ${id}`);
    if (ids.has(id)) fail(source, `joints ${ids.get(id)} and ${name} share id ${id}`);
    ids.set(id, name);
    if (!SERVO_MODELS.includes(j.model as ServoModel)) fail(source, `joint ${name}.model must be one of ${SERVO_MODELS.join(", ")}; got ${JSON.stringify(j.model)}`);
    const model = j.model as ServoModel;
    protocols.add(controlTable(model).protocol);
    const rangeMinTicks = integer(source, `joint ${name}.rangeMinTicks`, j.rangeMinTicks);
    const rangeMaxTicks = integer(source, `joint ${name}.rangeMaxTicks`, j.rangeMaxTicks);
    if (rangeMinTicks >= rangeMaxTicks) fail(source, `joint ${name}: rangeMinTicks (${rangeMinTicks}) must be below rangeMaxTicks (${rangeMaxTicks})`);
    const driveMode = j.driveMode === undefined ? 0 : integer(source, `joint ${name}.driveMode`, j.driveMode);
    if (driveMode !== 0 && driveMode !== 1) fail(source, `joint ${name}.driveMode must be 0 (normal) or 1 (inverted); got ${driveMode}`);
    joints[name] = { id, model, homingOffsetTicks: integer(source, `joint ${name}.homingOffsetTicks`, j.homingOffsetTicks), rangeMinTicks, rangeMaxTicks, driveMode };
  }
  if (protocols.size > 1) fail(source, "all joints on one bus must use the same protocol; got both feetech and dynamixel models");
  return { calibratedAt, joints };
}

export function loadCalibration(path: string): Calibration {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    throw new Error(`servo calibration ${path}: cannot read the file (${(cause as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    fail(path, `not valid JSON (${(cause as Error).message})`);
  }
  return parseCalibration(json, path);
}

function sign(joint: JointCalibration): 1 | -1 {
  return joint.driveMode === 1 ? -1 : 1;
}

/** Raw servo ticks to joint radians. */
export function jointRadFromTicks(joint: JointCalibration, table: ControlTable, ticks: number): number {
  return sign(joint) * ticksToRad(ticks - joint.homingOffsetTicks, table);
}

/** Joint radians to raw goal ticks, rounded and clamped to the calibrated range. */
export function goalTicksFromRad(joint: JointCalibration, table: ControlTable, positionRad: number): number {
  if (!Number.isFinite(positionRad)) throw new RangeError(`goal position must be a finite number of radians; got ${positionRad}`);
  const ticks = Math.round(joint.homingOffsetTicks + sign(joint) * radToTicks(positionRad, table));
  return Math.min(joint.rangeMaxTicks, Math.max(joint.rangeMinTicks, ticks));
}

/** Direction-corrected scale for velocity and current (drive mode flips their sign too). */
export function jointDirection(joint: JointCalibration): 1 | -1 {
  return sign(joint);
}
