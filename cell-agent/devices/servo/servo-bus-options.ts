/**
 * Options of `SerialServoBus`: one object, compiled once by `compileServoBusOptions` (defaults filled,
 * values checked, unknown keys rejected).
 */
import { Calibration, loadCalibration, parseCalibration } from "./calibration.js";

/** The part of a serialport `SerialPort` (or any duplex byte stream) the bus uses. */
export interface ServoPort {
  write(chunk: Buffer, callback?: (error: Error | null | undefined) => void): boolean;
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  on(event: "close" | "error", listener: (arg?: unknown) => void): unknown;
  removeListener(event: string, listener: (...args: any[]) => void): unknown;
  close?(callback?: (error?: Error | null) => void): void;
}

export interface ServoBusOptionsInput {
  /** Joint names in the robot's order (e.g. the catalog's so101 joints). Required. */
  jointNames: readonly string[];
  /** Calibration object, or the path of its JSON file. Required; must cover every joint. */
  calibration: Calibration | string;
  /** Serial device, e.g. "/dev/ttyACM0" or a pty path. Exactly one of `path` / `port`. */
  path?: string;
  /** An already open port or stream (tests: SerialPortMock). Exactly one of `path` / `port`. */
  port?: ServoPort;
  /** Bus speed, bit/s (default 1_000_000, the STS3215 and Assay's Dynamixel default). */
  baudRate?: number;
  /** Fixed part of each transaction's timeout, ms (default 10); the bytes' wire time is added. */
  transactionTimeoutMs?: number;
  /** Re-sends after a timeout, malformed, short or checksum-bad reply (default 3). */
  retries?: number;
  /**
   * Dynamixel Bus Watchdog, ms (default 100; 0 disables). Rounded up to the register's 20 ms unit.
   * Servos with torque on stop by themselves when the agent is silent for longer. Ignored for Feetech.
   */
  watchdogMs?: number;
  /**
   * Effort limit written to every servo on open, percent of the register's full scale (default none:
   * the servos keep theirs). STS3215: Torque Limit; XM430: Current Limit; XL430: PWM Limit. The
   * Dynamixel registers are EEPROM, written while torque is off.
   */
  effortLimitPercent?: number;
  /** Monotonic time source for JointState.tNs (default process.hrtime.bigint). */
  nowNs?: () => bigint;
  /** Wall clock for the calibration age, ms since the epoch (default Date.now). */
  wallClockMs?: () => number;
}

export interface ServoBusOptions {
  jointNames: readonly string[];
  calibration: Calibration;
  path: string | null;
  port: ServoPort | null;
  baudRate: number;
  transactionTimeoutMs: number;
  retries: number;
  watchdogMs: number;
  effortLimitPercent: number | null;
  nowNs: () => bigint;
  wallClockMs: () => number;
}

const KEYS = ["jointNames", "calibration", "path", "port", "baudRate", "transactionTimeoutMs", "retries", "watchdogMs", "effortLimitPercent", "nowNs", "wallClockMs"];

export const SERVO_BUS_DEFAULTS = {
  baudRate: 1_000_000,
  transactionTimeoutMs: 10,
  retries: 3,
  watchdogMs: 100,
} as const;

function nonNegative(name: string, value: unknown, integer: boolean): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    throw new RangeError(`servo bus option ${name} must be a non-negative ${integer ? "integer" : "number"}; got ${JSON.stringify(value)}`);
  }
  return value;
}

function percent(name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > 100) throw new RangeError(`servo bus option ${name} must be a number in (0, 100]; got ${JSON.stringify(value)}`);
  return value;
}

export function compileServoBusOptions(input: ServoBusOptionsInput): ServoBusOptions {
  for (const key of Object.keys(input)) if (!KEYS.includes(key)) throw new RangeError(`unknown servo bus option "${key}"; known: ${KEYS.join(", ")}`);
  const jointNames = input.jointNames;
  if (!Array.isArray(jointNames) || jointNames.length === 0) throw new RangeError("servo bus option jointNames must list at least one joint");
  if ((input.path === undefined) === (input.port === undefined)) throw new RangeError("servo bus needs exactly one of path (a serial device) or port (an open stream)");
  const calibration = typeof input.calibration === "string" ? loadCalibration(input.calibration) : parseCalibrationObject(input.calibration);
  const missing = jointNames.filter((name) => !calibration.joints[name]);
  if (missing.length) throw new RangeError(`servo calibration has no entry for joint(s) ${missing.join(", ")}`);
  const baudRate = nonNegative("baudRate", input.baudRate ?? SERVO_BUS_DEFAULTS.baudRate, true);
  if (baudRate === 0) throw new RangeError("servo bus option baudRate must be positive; got 0");
  return {
    jointNames: [...jointNames],
    calibration,
    path: input.path ?? null,
    port: input.port ?? null,
    baudRate,
    transactionTimeoutMs: nonNegative("transactionTimeoutMs", input.transactionTimeoutMs ?? SERVO_BUS_DEFAULTS.transactionTimeoutMs, false),
    retries: nonNegative("retries", input.retries ?? SERVO_BUS_DEFAULTS.retries, true),
    watchdogMs: nonNegative("watchdogMs", input.watchdogMs ?? SERVO_BUS_DEFAULTS.watchdogMs, false),
    effortLimitPercent: input.effortLimitPercent === undefined ? null : percent("effortLimitPercent", input.effortLimitPercent),
    nowNs: input.nowNs ?? (() => process.hrtime.bigint()),
    wallClockMs: input.wallClockMs ?? (() => Date.now()),
  };
}

/** A Calibration built in code is checked like a file (dates re-serialised). */
function parseCalibrationObject(calibration: Calibration): Calibration {
  return parseCalibration({
    ...(calibration.calibratedAt ? { calibratedAt: calibration.calibratedAt.toISOString() } : {}),
    joints: calibration.joints,
  });
}
