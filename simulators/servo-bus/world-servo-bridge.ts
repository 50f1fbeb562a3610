/**
 * Puts a SimWorld's arm behind an emulated serial servo bus, so a simulated cell's agent drives it
 * with the real `SerialServoBus` over serialport's API, byte for byte as on a real arm:
 *
 *   SerialServoBus --bytes--> SerialPortMock --bytes--> ServoBusEmulator --> WorldJointMotion --> SimWorld
 *
 * The world stays the single physics: each emulated servo's motion is a view of one world joint (goal
 * writes set the world's joint goal; present position, velocity, current and temperature read the
 * world's measured joints; torque enable maps to world.setTorque). The emulator's clock is world time,
 * so the Dynamixel bus watchdog counts simulated milliseconds.
 *
 * Like the in-process SimMotorBus, the e-stop cuts motor power in hardware: while it is pressed the
 * world's joints are limp whatever the servos' torque registers say.
 *
 * The FR3 has no serial servo bus; its simulated cell uses Dynamixel X-series servos (XM430-W350) as a
 * stand-in so that the fixed-arm class is exercised over a wire protocol too. A Dynamixel reports one
 * firmware byte, so the stand-in's bus is wrapped to report the pinned Franka release (see
 * `FirmwareLabelledBus`).
 *
 * ALOHA runs on its real layout: each follower arm on its own Dynamixel bus (ids 1..7: waist, shoulder,
 * elbow, forearm_roll, wrist_angle on XM540-W270, wrist_rotate and gripper on XM430-W350, LeRobot's
 * AlohaRobotConfig without the shadow servos, which follow their primary by Secondary ID on the real arm),
 * driven by one SerialServoBus per bus under a MultiServoBus, as a real aloha cell's agent config builds
 * it. The leader arms are not emulated: the agent never reads them (they are for teleoperation).
 */
import type { JointState, MotorBus } from "../../cell-agent/hardware/types.js";
import type { Calibration } from "../../cell-agent/devices/servo/calibration.js";
import type { ServoModel } from "../../cell-agent/devices/servo/control-tables.js";
import { controlTable } from "../../cell-agent/devices/servo/control-tables.js";
import { MultiServoBus } from "../../cell-agent/devices/servo/multi-bus.js";
import { SerialServoBus } from "../../cell-agent/devices/servo/servo-bus.js";
import type { SimEstopInput } from "../devices/sim-estop-input.js";
import type { SimWorld } from "../world/sim-world.js";
import { createMockServoPort, type MockServoPort } from "./mock-port.js";
import type { ServoMotion } from "./servo-emulator.js";

/** One emulated bus of a simulated robot: which of the robot's joints (ids 1..n in this order) and their servo models. */
export interface SimServoBusLayout {
  name: string;
  joints: readonly string[];
  models: readonly ServoModel[];
}

const ALOHA_ARM: readonly ServoModel[] = ["xm540-w270", "xm540-w270", "xm540-w270", "xm540-w270", "xm540-w270", "xm430-w350", "xm430-w350"];

/** The buses of each wire-simulated robot model ("all" joints: every joint of the model, one bus). */
const SERVO_LAYOUTS: Readonly<Record<string, Array<{ name: string; joints: "all" | ((joint: string) => boolean); models: ServoModel | readonly ServoModel[] }>>> = {
  so101: [{ name: "arm", joints: "all", models: "sts3215" }],
  fr3: [{ name: "arm", joints: "all", models: "xm430-w350" }],
  aloha: [
    { name: "left", joints: (j) => j.startsWith("left_"), models: ALOHA_ARM },
    { name: "right", joints: (j) => j.startsWith("right_"), models: ALOHA_ARM },
  ],
};

/** Robot models whose simulated cell drives its joints over emulated serial servo buses. */
export const SERIAL_SERVO_MODELS: readonly string[] = Object.keys(SERVO_LAYOUTS);

/** The emulated buses of a robot model over its joint list (throws for a model without one). */
export function servoBusLayout(modelId: string, jointNames: readonly string[]): SimServoBusLayout[] {
  const layout = SERVO_LAYOUTS[modelId];
  if (!layout) throw new Error(`robot model "${modelId}" has no simulated servo bus; models with one: ${SERIAL_SERVO_MODELS.join(", ")}`);
  return layout.map((bus) => {
    const joints = bus.joints === "all" ? [...jointNames] : jointNames.filter(bus.joints);
    const models = typeof bus.models === "string" ? joints.map(() => bus.models as ServoModel) : [...bus.models];
    if (models.length !== joints.length) throw new Error(`simulated ${modelId} bus ${bus.name}: ${joints.length} joints but ${models.length} servo models`);
    return { name: bus.name, joints, models };
  });
}

/** The wall-clock instant simulated time 0 stands for, ms since the epoch (calibration age is sim time). */
export const SIM_EPOCH_MS = Date.parse("2026-01-01T00:00:00Z");

/** Raw ticks at which every simulated joint reads 0 rad. */
const HOME_TICKS = 2048;
/** Largest magnitude every present-value register of both protocols can hold. */
const REGISTER_LIMIT = 32767;

function saturate(value: number): number {
  return Math.max(-REGISTER_LIMIT, Math.min(REGISTER_LIMIT, value));
}

export interface WorldServoBusOptions {
  world: SimWorld;
  estop: SimEstopInput;
  /** The cell's firmware pin, e.g. "3.11" (Feetech major.minor) or "5.7.2" (FR3 stand-in: major in the Dynamixel byte). */
  firmware: string;
  /** One servo model for every joint on one bus (default: the model's layout, `servoBusLayout`). */
  servoModel?: ServoModel;
  /** SerialServoBus Dynamixel bus watchdog, simulated ms (default 100, the driver's default; 0 disables). */
  watchdogMs?: number;
}

/** One emulated bus and the driver on it. */
export interface WorldServoBusMember {
  name: string;
  joints: readonly string[];
  /** The real driver. */
  serial: SerialServoBus;
  mock: MockServoPort;
  calibration: Calibration;
}

export interface WorldServoBus {
  /** What the agent gets: the SerialServoBus, or a MultiServoBus over several; a Dynamixel robot's labelled with its firmware pin. */
  motors: MotorBus;
  /** Every bus, in the layout's order. */
  buses: WorldServoBusMember[];
  /** The first bus's driver and emulated port (the only one for single-bus robots). */
  serial: SerialServoBus;
  mock: MockServoPort;
  close(): Promise<void>;
}

/** The calibration a simulated bus is built with: ids 1..n in joint order, 0 rad at 2048 ticks, full turn range. */
export function simulatedCalibration(jointNames: readonly string[], model: ServoModel | readonly ServoModel[]): Calibration {
  const modelOf = (i: number) => (typeof model === "string" ? model : model[i]);
  return {
    calibratedAt: new Date(SIM_EPOCH_MS),
    joints: Object.fromEntries(
      jointNames.map((name, i) => [name, { id: i + 1, model: modelOf(i), homingOffsetTicks: HOME_TICKS, rangeMinTicks: 0, rangeMaxTicks: controlTable(modelOf(i)).ticksPerRev - 1, driveMode: 0 as const }]),
    ),
  };
}

/** The world side shared by every servo on the bus: per-servo torque wishes, the e-stop, one sample per instant. */
export class WorldServoLink {
  private readonly torqueWanted: boolean[];
  private cached: JointState | null = null;
  private cachedTruth: number[] = [];

  constructor(readonly world: SimWorld, private readonly estop: SimEstopInput) {
    this.torqueWanted = world.embodiment.jointNames.map(() => world.servos.torqueEnabled);
    estop.onTrigger(() => this.apply());
  }

  /**
   * The world's measured joints, drawn once per world instant (and again if a reset moved the arm), so
   * the sensor noise stream advances the same way however many registers a transaction reads.
   */
  sample(): JointState {
    this.apply();
    const truth = this.world.servos.positionRad;
    const fresh = this.cached !== null && this.cached.tNs === this.world.tNs && truth.every((p, i) => p === this.cachedTruth[i]);
    if (!fresh) {
      this.cached = this.world.measuredJoints();
      this.cachedTruth = [...truth];
    }
    return this.cached!;
  }

  goalRad(joint: number): number {
    return this.world.servos.goalRad[joint];
  }

  setGoalRad(joint: number, positionRad: number): void {
    const goals = [...this.world.servos.goalRad];
    goals[joint] = positionRad;
    this.world.setGoals(goals);
  }

  torque(joint: number): boolean {
    return this.torqueWanted[joint];
  }

  setTorque(joint: number, on: boolean): void {
    this.torqueWanted[joint] = on;
    this.apply();
  }

  /** World torque is on only when every servo has torque enabled and the e-stop is released. */
  apply(): void {
    this.world.setTorque(this.torqueWanted.every(Boolean) && !this.estop.isPressed());
  }
}

/** One emulated servo's motion, read from and written to one world joint. The world integrates; `advance` does nothing. */
export class WorldJointMotion implements ServoMotion {
  private readonly ticksPerRad: number;

  constructor(private readonly link: WorldServoLink, private readonly joint: number, ticksPerRev: number) {
    this.ticksPerRad = ticksPerRev / (2 * Math.PI);
  }

  // Registers saturate like a real servo's (a 15-bit magnitude on Feetech) rather than overflow.
  get positionTicks(): number {
    return saturate(HOME_TICKS + this.link.sample().positionRad[this.joint] * this.ticksPerRad);
  }

  get velocityTicksS(): number {
    return saturate(this.link.sample().velocityRadS[this.joint] * this.ticksPerRad);
  }

  get currentA(): number {
    return this.link.sample().currentA[this.joint];
  }

  get temperatureC(): number {
    return this.link.sample().temperatureC[this.joint];
  }

  get goalTicks(): number {
    return HOME_TICKS + this.link.goalRad(this.joint) * this.ticksPerRad;
  }

  set goalTicks(ticks: number) {
    this.link.setGoalRad(this.joint, (ticks - HOME_TICKS) / this.ticksPerRad);
  }

  get torqueOn(): boolean {
    return this.link.torque(this.joint);
  }

  set torqueOn(on: boolean) {
    this.link.setTorque(this.joint, on);
  }

  advance(): void {}

  stop(): void {
    this.link.setGoalRad(this.joint, this.link.sample().positionRad[this.joint]);
  }
}

/**
 * A MotorBus that reports a firmware label in place of the bus's firmware byte when the byte is the
 * label's major version (the FR3 stand-in); a different byte is reported as it is, so a mismatch shows.
 */
export class FirmwareLabelledBus implements MotorBus {
  readonly jointNames: readonly string[];

  constructor(private readonly bus: SerialServoBus | MultiServoBus, private readonly label: string) {
    this.jointNames = bus.jointNames;
  }

  async readFirmware(): Promise<string> {
    const reported = await this.bus.readFirmware();
    return reported === this.label.split(".")[0] ? this.label : reported;
  }

  readState(): Promise<JointState> {
    return this.bus.readState();
  }

  writeGoalPositions(positionRad: readonly number[]): Promise<void> {
    return this.bus.writeGoalPositions(positionRad);
  }

  setTorque(enabled: boolean): Promise<void> {
    return this.bus.setTorque(enabled);
  }

  readCalibrationAgeS(): Promise<number> {
    return this.bus.readCalibrationAgeS();
  }
}

/**
 * Builds the emulated buses over the world and opens the real SerialServoBus on each (pings every servo,
 * checks models, arms the Dynamixel watchdog). Torque is left as the world has it (on), like the
 * in-process bus, so goals move the arm without a setTorque(true) first.
 */
export async function openWorldServoBus(options: WorldServoBusOptions): Promise<WorldServoBus> {
  const { world, estop, firmware } = options;
  const modelId = world.embodiment.model;
  const jointNames = world.embodiment.jointNames;
  const layout = options.servoModel ? [{ name: "arm", joints: [...jointNames], models: jointNames.map(() => options.servoModel!) }] : servoBusLayout(modelId, jointNames);
  const link = new WorldServoLink(world, estop);
  const positions = world.servos.positionRad;
  const buses: WorldServoBusMember[] = [];
  const closeAll = async () => {
    for (const bus of buses) {
      await bus.serial.close();
      await bus.mock.close();
    }
  };
  try {
    for (const bus of layout) {
      const protocol = controlTable(bus.models[0]).protocol;
      // Feetech carries "major.minor" in two registers; a Dynamixel only the major byte.
      const firmwareRegisters = protocol === "feetech" ? firmware : firmware.split(".")[0];
      const worldJoint = bus.joints.map((joint) => jointNames.indexOf(joint));
      const mock = await createMockServoPort({
        servos: bus.joints.map((_, i) => {
          const table = controlTable(bus.models[i]);
          return { id: i + 1, model: bus.models[i], initialTicks: Math.round(HOME_TICKS + positions[worldJoint[i]] * table.ticksPerRev / (2 * Math.PI)) };
        }),
        firmware: firmwareRegisters,
        nowMs: () => Number(world.tNs) / 1e6,
        motion: (spec, table) => new WorldJointMotion(link, worldJoint[spec.id - 1], table.ticksPerRev),
      });
      // The e-stop has no release event: power comes back to the servos when the bus is next used.
      const emulator = mock.emulator;
      const write = emulator.write.bind(emulator);
      emulator.write = (bytes: Uint8Array): void => {
        link.apply();
        write(bytes);
      };
      const calibration = simulatedCalibration(bus.joints, bus.models);
      let serial: SerialServoBus;
      try {
        serial = await SerialServoBus.open({
          jointNames: bus.joints,
          calibration,
          port: mock.port,
          nowNs: () => world.tNs,
          wallClockMs: () => SIM_EPOCH_MS + Number(world.tNs) / 1e6,
          ...(options.watchdogMs === undefined ? {} : { watchdogMs: options.watchdogMs }),
        });
      } catch (error) {
        await mock.close();
        throw error;
      }
      buses.push({ name: bus.name, joints: bus.joints, serial, mock, calibration });
    }
    const robot = buses.length === 1 ? buses[0].serial : new MultiServoBus(jointNames, buses.map((b) => ({ name: b.name, bus: b.serial })));
    if (world.servos.torqueEnabled) await robot.setTorque(true);
    const feetech = controlTable(layout[0].models[0]).protocol === "feetech";
    return {
      motors: feetech ? robot : new FirmwareLabelledBus(robot, firmware),
      buses,
      serial: buses[0].serial,
      mock: buses[0].mock,
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
