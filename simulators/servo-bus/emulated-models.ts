/**
 * The control tables the servo emulator serves, written out from the manufacturers' documents on their
 * own (not taken from the driver's tables): which address holds what, how many bytes, how it is signed,
 * and the physical units the emulator's motion model publishes in.
 *
 * Sources: Feetech STS3215 memory table (SMS/STS series, as in LeRobot's feetech `tables.py`
 * STS_SMS_SERIES_CONTROL_TABLE: Firmware_Major_Version 0, Firmware_Minor_Version 1, Model_Number 3, ID 5,
 * Min/Max_Position_Limit 9/11, Homing_Offset 31 (sign bit 11), Torque_Enable 40, Acceleration 41,
 * Goal_Position 42, Goal_Velocity 46, Torque_Limit 48, Present_Position 56, Present_Velocity 58,
 * Present_Temperature 63, Present_Current 69; sign-magnitude with bit 15); ROBOTIS e-manual, X series
 * control table (Model Number 0, Firmware Version 6, ID 7, Drive Mode 10, Homing Offset 20, PWM/Current
 * Limit 36/38, Max/Min Position Limit 48/52, Torque Enable 64, Hardware Error Status 70, Bus Watchdog 98
 * (20 ms units), Profile Acceleration/Velocity 108/112, Goal Position 116, Present Current/Load 126,
 * Present Velocity 128, Present Position 132, Present Temperature 146; two's complement).
 */

export type EmulatedProtocol = "feetech" | "dynamixel";
export type EmulatedServoModel = "sts3215" | "xl430-w250" | "xm430-w350" | "xm540-w270";
export const EMULATED_SERVO_MODELS: readonly EmulatedServoModel[] = ["sts3215", "xl430-w250", "xm430-w350", "xm540-w270"];

/** How a register's bytes encode a number. */
export type RegisterEncoding = "unsigned" | "twosComplement" | { signBit: number };

export interface EmulatedRegister {
  address: number;
  size: 1 | 2 | 4;
  encoding: RegisterEncoding;
}

export type EmulatedRegisterName =
  | "modelNumber" | "firmwareMajor" | "firmwareMinor" | "id" | "homingOffset" | "minPositionLimit" | "maxPositionLimit"
  | "torqueEnable" | "goalPosition" | "presentPosition" | "presentVelocity" | "presentCurrent" | "presentTemperature"
  | "busWatchdog" | "effortLimit";

export interface EmulatedModel {
  model: EmulatedServoModel;
  protocol: EmulatedProtocol;
  modelNumber: number;
  ticksPerRev: number;
  registers: Partial<Record<EmulatedRegisterName, EmulatedRegister>>;
  /** rad/s per unit of Present Velocity. */
  velocityUnitRadS: number;
  /** Amperes per unit of Present Current (XL430: Present Load, 0.1 % of the stall current). */
  currentUnitA: number;
  /** Bus Watchdog unit, ms (Dynamixel X). */
  busWatchdogUnitMs?: number;
  /** What the motion model assumes of the motor. */
  nominal: { maxSpeedRadS: number; maxAccelRadS2: number; stallCurrentA: number };
}

const TWO_PI = 2 * Math.PI;
const u = (address: number, size: 1 | 2 | 4): EmulatedRegister => ({ address, size, encoding: "unsigned" });
const s = (address: number, size: 1 | 2 | 4): EmulatedRegister => ({ address, size, encoding: "twosComplement" });
const sm = (address: number, size: 1 | 2 | 4, signBit: number): EmulatedRegister => ({ address, size, encoding: { signBit } });

const STS3215: EmulatedModel = {
  model: "sts3215",
  protocol: "feetech",
  modelNumber: 777,
  ticksPerRev: 4096,
  registers: {
    firmwareMajor: u(0, 1), firmwareMinor: u(1, 1), modelNumber: u(3, 2), id: u(5, 1),
    minPositionLimit: u(9, 2), maxPositionLimit: u(11, 2), homingOffset: sm(31, 2, 11),
    torqueEnable: u(40, 1), goalPosition: sm(42, 2, 15), effortLimit: u(48, 2),
    presentPosition: sm(56, 2, 15), presentVelocity: sm(58, 2, 15), presentTemperature: u(63, 1), presentCurrent: sm(69, 2, 15),
  },
  // Present_Velocity in steps/s; Present_Current in 6.5 mA.
  velocityUnitRadS: TWO_PI / 4096,
  currentUnitA: 0.0065,
  nominal: { maxSpeedRadS: 4.7, maxAccelRadS2: 40, stallCurrentA: 2.7 },
};

function xSeries(model: EmulatedServoModel, modelNumber: number, currentUnitA: number, effortLimitAddress: number, nominal: EmulatedModel["nominal"]): EmulatedModel {
  return {
    model,
    protocol: "dynamixel",
    modelNumber,
    ticksPerRev: 4096,
    registers: {
      modelNumber: u(0, 2), firmwareMajor: u(6, 1), id: u(7, 1), homingOffset: s(20, 4), effortLimit: u(effortLimitAddress, 2),
      maxPositionLimit: u(48, 4), minPositionLimit: u(52, 4), torqueEnable: u(64, 1), busWatchdog: s(98, 1),
      goalPosition: s(116, 4), presentCurrent: s(126, 2), presentVelocity: s(128, 4), presentPosition: s(132, 4), presentTemperature: u(146, 1),
    },
    // Present Velocity in 0.229 rev/min.
    velocityUnitRadS: (0.229 * TWO_PI) / 60,
    currentUnitA,
    busWatchdogUnitMs: 20,
    nominal,
  };
}

const MODELS: Record<EmulatedServoModel, EmulatedModel> = {
  sts3215: STS3215,
  "xl430-w250": xSeries("xl430-w250", 1060, 0.0014, 36, { maxSpeedRadS: 6.0, maxAccelRadS2: 40, stallCurrentA: 1.4 }),
  "xm430-w350": xSeries("xm430-w350", 1020, 0.00269, 38, { maxSpeedRadS: 4.8, maxAccelRadS2: 40, stallCurrentA: 2.3 }),
  "xm540-w270": xSeries("xm540-w270", 1120, 0.00269, 38, { maxSpeedRadS: 3.1, maxAccelRadS2: 30, stallCurrentA: 4.4 }),
};

export function emulatedModel(model: EmulatedServoModel): EmulatedModel {
  const found = MODELS[model];
  if (!found) throw new RangeError(`servo emulator: unknown model "${model}"; known: ${EMULATED_SERVO_MODELS.join(", ")}`);
  return found;
}

export function emulatedRegister(model: EmulatedModel, name: EmulatedRegisterName): EmulatedRegister {
  const reg = model.registers[name];
  if (!reg) throw new RangeError(`servo emulator: model ${model.model} has no ${name} register`);
  return reg;
}

/** Reads a register's value out of a servo's memory. */
export function readRegister(memory: Uint8Array, reg: EmulatedRegister): number {
  let raw = 0;
  for (let i = reg.size - 1; i >= 0; i--) raw = raw * 256 + memory[reg.address + i];
  if (reg.encoding === "unsigned") return raw;
  if (reg.encoding === "twosComplement") return raw >= 2 ** (8 * reg.size - 1) ? raw - 2 ** (8 * reg.size) : raw;
  const sign = 2 ** reg.encoding.signBit;
  const magnitude = raw % sign;
  return Math.floor(raw / sign) % 2 ? -magnitude : magnitude;
}

/** Writes a value into a servo's memory in the register's encoding (little-endian). */
export function writeRegister(memory: Uint8Array, reg: EmulatedRegister, value: number): void {
  let v = Math.round(value);
  if (typeof reg.encoding === "object") {
    const sign = 2 ** reg.encoding.signBit;
    const magnitude = Math.min(Math.abs(v), sign - 1);
    v = v < 0 ? magnitude + sign : magnitude;
  } else if (v < 0) {
    v += 2 ** (8 * reg.size);
  }
  for (let i = 0; i < reg.size; i++) {
    memory[reg.address + i] = v % 256;
    v = Math.floor(v / 256);
  }
}
