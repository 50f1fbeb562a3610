/**
 * Control tables of the servo models Assay drives: register addresses, sizes and encodings, and the
 * units that turn register values into radians, rad/s, amperes and degrees Celsius.
 *
 * Sources: LeRobot's feetech `tables.py` (STS_SMS_SERIES_CONTROL_TABLE, sign-magnitude bits) and the
 * Feetech SMS_STS SDK (ReadPos/ReadSpeed/ReadCurrent use bit 15, ReadLoad bit 10); ROBOTIS e-manual
 * X-series control tables (XL430-W250, XM430-W350, XM540-W270: one register layout; model numbers 1060,
 * 1020 and 1120 as in LeRobot's dynamixel `tables.py`; the XM540-W270's Current Limit 0..2047 and its
 * 4.4 A stall current at 12 V from its e-manual page).
 */
import type { ProtocolName } from "./codec.js";
import { decodeSignMagnitude, encodeSignMagnitude } from "./feetech-protocol.js";
import { readUint, uintBytes } from "./codec.js";

export type ServoModel = "sts3215" | "xl430-w250" | "xm430-w350" | "xm540-w270";
export const SERVO_MODELS: readonly ServoModel[] = ["sts3215", "xl430-w250", "xm430-w350", "xm540-w270"];

export interface Register {
  address: number;
  size: 1 | 2 | 4;
  /** Feetech sign-magnitude: the bit that carries the sign. */
  signBit?: number;
  /** Dynamixel two's complement. */
  signed?: boolean;
}

export type RegisterName =
  | "modelNumber"
  | "firmwareMajor"
  | "firmwareMinor"
  | "homingOffset"
  | "minPositionLimit"
  | "maxPositionLimit"
  | "torqueEnable"
  | "goalPosition"
  | "presentPosition"
  | "presentVelocity"
  | "presentCurrent"
  | "presentTemperature"
  | "driveMode"
  | "busWatchdog"
  | "hardwareErrorStatus"
  | "profileVelocity"
  | "profileAcceleration"
  | "effortLimit";

export interface ControlTable {
  model: ServoModel;
  protocol: ProtocolName;
  /** Value of the model number register. */
  modelNumber: number;
  /** Encoder ticks per revolution. */
  ticksPerRev: number;
  /** Registers this model has (Feetech has no bus watchdog, Dynamixel one firmware byte). */
  registers: Partial<Record<RegisterName, Register>>;
  /** One contiguous span holding present position, velocity, current and temperature: read in one go. */
  stateBlock: { address: number; length: number };
  /** rad/s per unit of present velocity. */
  velocityUnitRadS: number;
  /**
   * Amperes per unit of present current. For the XL430 (no current sensor) register 126 is Present
   * Load in 0.1 % of stall torque; the value is scaled by the stall current, an estimate.
   */
  currentUnitA: number;
  temperatureUnitC: number;
  /**
   * The register that bounds the servo's effort and its full-scale value (100 %): STS3215 Torque Limit
   * (0.1 % of maximum torque, RAM), XM430 Current Limit (2.69 mA units, EEPROM: torque off), XL430 PWM
   * Limit (it has no current sensor; EEPROM).
   */
  effortLimitFullScale?: number;
  /** Unit of the Bus Watchdog register, ms (Dynamixel only). */
  busWatchdogUnitMs?: number;
  /** Nominal limits used by the emulator's motion model. */
  nominal: { maxSpeedRadS: number; maxAccelRadS2: number; stallCurrentA: number };
}

const TWO_PI = 2 * Math.PI;

const STS3215: ControlTable = {
  model: "sts3215",
  protocol: "feetech",
  modelNumber: 777,
  ticksPerRev: 4096,
  registers: {
    firmwareMajor: { address: 0, size: 1 },
    firmwareMinor: { address: 1, size: 1 },
    modelNumber: { address: 3, size: 2 },
    minPositionLimit: { address: 9, size: 2 },
    maxPositionLimit: { address: 11, size: 2 },
    homingOffset: { address: 31, size: 2, signBit: 11 },
    torqueEnable: { address: 40, size: 1 },
    profileAcceleration: { address: 41, size: 1 },
    goalPosition: { address: 42, size: 2, signBit: 15 },
    profileVelocity: { address: 46, size: 2, signBit: 15 },
    presentPosition: { address: 56, size: 2, signBit: 15 },
    presentVelocity: { address: 58, size: 2, signBit: 15 },
    presentTemperature: { address: 63, size: 1 },
    presentCurrent: { address: 69, size: 2, signBit: 15 },
    // Torque_Limit in LeRobot's STS_SMS_SERIES_CONTROL_TABLE.
    effortLimit: { address: 48, size: 2 },
  },
  effortLimitFullScale: 1000,
  stateBlock: { address: 56, length: 15 },
  // One step per second; 4096 steps per turn.
  velocityUnitRadS: TWO_PI / 4096,
  // 6.5 mA per unit.
  currentUnitA: 0.0065,
  temperatureUnitC: 1,
  nominal: { maxSpeedRadS: 4.7, maxAccelRadS2: 40, stallCurrentA: 2.7 },
};

function xSeries(model: ServoModel, modelNumber: number, currentUnitA: number, nominal: ControlTable["nominal"], effortLimit: { address: number; fullScale: number }): ControlTable {
  return {
    model,
    protocol: "dynamixel",
    modelNumber,
    ticksPerRev: 4096,
    registers: {
      modelNumber: { address: 0, size: 2 },
      firmwareMajor: { address: 6, size: 1 },
      driveMode: { address: 10, size: 1 },
      homingOffset: { address: 20, size: 4, signed: true },
      maxPositionLimit: { address: 48, size: 4 },
      minPositionLimit: { address: 52, size: 4 },
      torqueEnable: { address: 64, size: 1 },
      hardwareErrorStatus: { address: 70, size: 1 },
      busWatchdog: { address: 98, size: 1, signed: true },
      profileAcceleration: { address: 108, size: 4 },
      profileVelocity: { address: 112, size: 4 },
      goalPosition: { address: 116, size: 4, signed: true },
      presentCurrent: { address: 126, size: 2, signed: true },
      presentVelocity: { address: 128, size: 4, signed: true },
      presentPosition: { address: 132, size: 4, signed: true },
      presentTemperature: { address: 146, size: 1 },
      effortLimit: { address: effortLimit.address, size: 2 },
    },
    effortLimitFullScale: effortLimit.fullScale,
    stateBlock: { address: 126, length: 21 },
    // 0.229 rev/min per unit.
    velocityUnitRadS: (0.229 * TWO_PI) / 60,
    currentUnitA,
    temperatureUnitC: 1,
    busWatchdogUnitMs: 20,
    nominal,
  };
}

const TABLES: Record<ServoModel, ControlTable> = {
  sts3215: STS3215,
  // Present Load, 0.1 % of a 1.4 A stall current.
  "xl430-w250": xSeries("xl430-w250", 1060, 0.0014, { maxSpeedRadS: 6.0, maxAccelRadS2: 40, stallCurrentA: 1.4 }, { address: 36, fullScale: 885 }),
  // Present Current, 2.69 mA per unit.
  "xm430-w350": xSeries("xm430-w350", 1020, 0.00269, { maxSpeedRadS: 4.8, maxAccelRadS2: 40, stallCurrentA: 2.3 }, { address: 38, fullScale: 1193 }),
  // ALOHA's (ViperX 300 S) bigger joints. Present Current and Current Limit in 2.69 mA units (limit 0..2047,
  // 5.5 A); 30 rev/min without load and 4.4 A stall at 12 V.
  "xm540-w270": xSeries("xm540-w270", 1120, 0.00269, { maxSpeedRadS: 3.1, maxAccelRadS2: 30, stallCurrentA: 4.4 }, { address: 38, fullScale: 2047 }),
};

export function controlTable(model: ServoModel): ControlTable {
  const table = TABLES[model];
  if (!table) throw new RangeError(`unknown servo model "${model}"; known: ${SERVO_MODELS.join(", ")}`);
  return table;
}

/** The register, or a clear error when this model lacks it. */
export function register(table: ControlTable, name: RegisterName): Register {
  const reg = table.registers[name];
  if (!reg) throw new RangeError(`servo model ${table.model} has no ${name} register`);
  return reg;
}

/** Decodes a register value from bytes read starting at `blockAddress`. */
export function decodeRegister(bytes: Uint8Array, blockAddress: number, reg: Register): number {
  const raw = readUint(bytes, reg.address - blockAddress, reg.size);
  if (reg.signBit !== undefined) return decodeSignMagnitude(raw, reg.signBit);
  if (reg.signed) {
    const bits = 8 * reg.size;
    return raw >= 2 ** (bits - 1) ? raw - 2 ** bits : raw;
  }
  return raw;
}

/** Encodes a register value as little-endian bytes in the register's encoding. */
export function encodeRegister(value: number, reg: Register): number[] {
  const v = Math.round(value);
  if (reg.signBit !== undefined) return uintBytes(encodeSignMagnitude(v, reg.signBit), reg.size);
  return uintBytes(v, reg.size);
}

export function ticksToRad(ticks: number, table: ControlTable): number {
  return (ticks * TWO_PI) / table.ticksPerRev;
}

export function radToTicks(rad: number, table: ControlTable): number {
  return (rad * table.ticksPerRev) / TWO_PI;
}
