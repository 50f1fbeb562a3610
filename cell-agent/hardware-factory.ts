/**
 * Builds a real cell's `CellHardware` from the agent config: the servo bus or rosbridge robot, V4L2
 * and MJPEG-over-HTTP cameras, NatNet mocap (when this build has the client), the e-stop input, the wall clock, the
 * technician-confirmed scene reset, and the policy runtime. Whatever was opened is closed again if a
 * later device fails.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadFirmwarePins } from "../firmware-pins/pins.js";
import type { AgentConfig, CameraConfig, DeadmanConfig, EstopConfig, MocapConfig, MotorsConfig, PoliciesConfig, SerialBusConfig } from "./config.js";
import { FfmpegCamera } from "./devices/camera/ffmpeg-camera.js";
import { syntheticInputArgs, v4l2InputArgs } from "./devices/camera/ffmpeg-input.js";
import { MjpegCamera } from "./devices/camera/mjpeg-camera.js";
import { WallClock } from "./devices/clock/wall-clock.js";
import { DeadmanOutput } from "./devices/deadman/deadman-output.js";
import { openGpioDeadmanLine } from "./devices/deadman/gpio-deadman.js";
import { openSerialDeadmanLine } from "./devices/deadman/serial-deadman.js";
import { openGpioEstop } from "./devices/estop/gpio-estop.js";
import type { PolledEstop } from "./devices/estop/polled-estop.js";
import { openSerialEstop } from "./devices/estop/serial-estop.js";
import { RosMotorBus } from "./devices/ros/ros-motor-bus.js";
import { OperatorSceneReset } from "./devices/scene/operator-scene-reset.js";
import { SceneReadyGate } from "./devices/scene/scene-ready-gate.js";
import { MultiServoBus } from "./devices/servo/multi-bus.js";
import { SerialServoBus, ServoBusError } from "./devices/servo/servo-bus.js";
import { catalogSafety } from "./safety/catalog-safety.js";
import type { Camera, CellHardware, Clock, GripperSensor, MocapSource, MotorBus, PolicyRuntime, WristForceTorque } from "./hardware/types.js";
import { ContainerPolicyRuntime } from "./policy/container-runtime.js";

export interface BuiltCell {
  hardware: CellHardware;
  /** Where POST /scene-ready confirms a reset. */
  sceneGate: SceneReadyGate;
  /** The servo bus (or buses) when the robot is on serial servos (for the counters in /metrics). */
  servoBus?: SerialServoBus | MultiServoBus;
}

export interface HardwareFactoryOptions {
  log: (line: string) => void;
}

type Closer = () => Promise<void> | void;

/** Joint names of the cell's robot model, in the catalog's order. */
export function catalogJoints(robotModel: string): string[] {
  const model = loadFirmwarePins().models.find((m) => m.id === robotModel);
  if (!model) throw new Error(`robot model "${robotModel}" is not in firmware-pins/catalog.json; fix "robotModel" in the agent config`);
  return model.joints;
}

/**
 * Opens the configured robot. Serial buses ping every servo and check its model on open; a robot on
 * several buses gets one MultiServoBus over them (a bus that fails closes the ones already open).
 */
export async function openMotors(motors: MotorsConfig, robotModel: string, clock: Clock): Promise<{ bus: MotorBus & { close(): Promise<void> }; servoBus?: SerialServoBus | MultiServoBus; gripper?: GripperSensor; wristFt?: WristForceTorque }> {
  if (motors.kind === "ros") {
    const bus = new RosMotorBus(motors.options, { clock });
    try {
      await bus.waitUntilReady(motors.options.connectTimeoutMs);
    } catch (error) {
      await bus.close();
      throw error;
    }
    return { bus, gripper: bus.gripper ?? undefined, wristFt: bus.wristFt ?? undefined };
  }
  const effortDefault = catalogSafety(robotModel).effortLimitPercent;
  const opened: Array<{ name: string; bus: SerialServoBus }> = [];
  try {
    for (const bus of motors.buses) opened.push({ name: bus.name, bus: await openSerialBus(bus, clock, effortDefault, motors.buses.length > 1) });
  } catch (error) {
    for (const member of opened) await member.bus.close().catch(() => undefined);
    throw error;
  }
  if (opened.length === 1) return { bus: opened[0].bus, servoBus: opened[0].bus };
  const multi = new MultiServoBus(catalogJoints(robotModel), opened);
  return { bus: multi, servoBus: multi };
}

/** Opens one serial bus; with several buses, an error names the bus. */
export async function openSerialBus(bus: SerialBusConfig, clock: Clock, effortDefault: number | null = null, named = false): Promise<SerialServoBus> {
  const effortLimitPercent = bus.effortLimitPercent ?? effortDefault;
  try {
    return await SerialServoBus.open({
      jointNames: bus.joints,
      calibration: bus.calibration,
      path: bus.path,
      baudRate: bus.baudRate,
      nowNs: () => clock.nowNs(),
      ...(bus.transactionTimeoutMs !== undefined ? { transactionTimeoutMs: bus.transactionTimeoutMs } : {}),
      ...(bus.retries !== undefined ? { retries: bus.retries } : {}),
      ...(bus.watchdogMs !== undefined ? { watchdogMs: bus.watchdogMs } : {}),
      ...(effortLimitPercent !== null ? { effortLimitPercent } : {}),
    });
  } catch (error) {
    if (!named) throw error;
    const wrapped = new ServoBusError(`bus ${bus.name} (${bus.path}): ${(error as Error).message}`, error instanceof ServoBusError ? error.ids : [], { cause: error });
    throw wrapped;
  }
}

/**
 * Opens a configured camera: a V4L2 device (or ffmpeg's synthetic "testsrc2") through ffmpeg, an
 * MJPEG-over-HTTP stream, or a ROS image topic on `rosBus` (the robot's own link; required for
 * those). None waits for a frame; `capture()` does.
 */
export function openCamera(camera: CameraConfig, clock: Clock, log?: (line: string) => void, rosBus?: RosMotorBus): Camera & { close?(): void } {
  const calibration = camera.calibration ? { calibration: camera.calibration } : {};
  const logOption = log ? { log } : {};
  if (camera.kind === "ros") {
    if (!rosBus) throw new Error(`camera ${camera.name}: the ROS topic ${camera.rosTopic} is read over the robot's rosbridge link, and the robot is not a ROS robot (motors.kind "ros")`);
    return rosBus.openCamera({ name: camera.name, topic: camera.rosTopic, type: camera.rosType, rateHz: camera.rateHz, ...calibration });
  }
  if (camera.kind === "mjpeg-http") return new MjpegCamera({ name: camera.name, url: camera.url, rateHz: camera.rateHz, ...calibration, nowNs: () => clock.nowNs(), ...logOption });
  const size = { width: camera.width, height: camera.height, frameRateHz: camera.frameRateHz };
  const inputArgs = camera.device === "testsrc2" ? syntheticInputArgs(size) : v4l2InputArgs({ device: camera.device, inputFormat: camera.inputFormat, ...size });
  return new FfmpegCamera({ name: camera.name, rateHz: camera.rateHz, inputArgs, source: camera.device, ...calibration, nowNs: () => clock.nowNs(), ...logOption });
}

/** Opens the configured dead-man output (not yet toggling: call start()). */
export async function openDeadman(deadman: DeadmanConfig, log?: (line: string) => void): Promise<DeadmanOutput> {
  const line = deadman.kind === "serial" ? await openSerialDeadmanLine(deadman.path, deadman.line) : openGpioDeadmanLine(deadman.chip, deadman.line);
  return new DeadmanOutput(line, { togglePeriodMs: deadman.togglePeriodMs, log });
}

/** Opens the configured e-stop input. */
export function openEstop(estop: EstopConfig, log?: (line: string) => void): Promise<PolledEstop> {
  return estop.kind === "serial" ? openSerialEstop(estop, log) : openGpioEstop(estop, log);
}

const natnetClientPath = join(dirname(fileURLToPath(import.meta.url)), "devices", "natnet", "natnet-client.ts");

/**
 * The NatNet mocap source (cell-agent/devices/natnet/, `NatNetClient.connect`), or undefined with a
 * log line when this build has no NatNet client. Loaded lazily so a build without it still starts.
 * NOTE: the client talks unicast from an ephemeral port; `mocap.localPort` is kept for multicast setups.
 */
export async function openMocap(mocap: MocapConfig, clock: Clock, log: (line: string) => void): Promise<(MocapSource & { close(): Promise<void> }) | undefined> {
  if (!existsSync(natnetClientPath)) {
    log(`mocap: this agent build has no NatNet client (cell-agent/devices/natnet/), so the mocap at ${mocap.serverAddress} is not used; episodes run without object poses`);
    return undefined;
  }
  type Client = MocapSource & { close(): Promise<void> };
  // A literal specifier, so a bundled agent (scripts/compiled-entry.mjs) carries the client too.
  const module = (await import("./devices/natnet/natnet-client.js")) as {
    NatNetClient?: { connect(input: { serverAddress: string }, deps?: { clock?: Clock }): Promise<Client> };
  };
  if (!module.NatNetClient) {
    log(`mocap: ${natnetClientPath} has no NatNetClient; mocap is not used`);
    return undefined;
  }
  return module.NatNetClient.connect({ serverAddress: mocap.serverAddress }, { clock });
}

/**
 * The cell's own policy runtime: with `runtime: "container"` a ContainerPolicyRuntime that runs the
 * configured images with docker or podman; with "none" one that refuses every image in words.
 * Endpoint policies are the agent's own business either way (agent.ts).
 */
export function policyRuntimeFor(policies: PoliciesConfig, log: (line: string) => void = () => undefined): PolicyRuntime {
  if (policies.runtime === "container") {
    return new ContainerPolicyRuntime({
      ...(policies.engine ? { engine: policies.engine } : {}),
      gpus: policies.gpus,
      memory: policies.memory,
      network: policies.network,
      startTimeoutMs: policies.startTimeoutMs,
      latencyBudgetMs: policies.latencyBudgetMs,
      warmupMs: policies.warmupMs,
      idleStopMs: policies.idleStopMs,
      images: policies.images,
      log,
    });
  }
  return {
    available: () => [],
    start: async (policy) => {
      const what = typeof policy.image === "string" ? `image ${policy.image}` : `a ${String(policy.type)} policy`;
      throw new Error(`this cell runs no policy images (policies.runtime is "none" in its agent config), so it cannot start ${what}; to run images, set policies.runtime to "container" and list them in policies.images (docs/install-cell-agent.md, Policies)`);
    },
  };
}

export async function buildCellHardware(config: AgentConfig, options: HardwareFactoryOptions): Promise<BuiltCell> {
  const { log } = options;
  if (!config.motors) throw new Error(`the agent config has no "motors" section; a real cell needs one (see docs/install-cell-agent.md)`);
  if (!config.estop) throw new Error(`the agent config has no "estop" section; a real cell must have an e-stop input wired to the agent (see docs/install-cell-agent.md)`);
  const closers: Closer[] = [];
  const closeAll = async () => {
    for (const close of closers.reverse()) await Promise.resolve(close()).catch((error: Error) => log(`closing a device failed: ${error.message}`));
  };
  try {
    const clock = new WallClock();
    const estop = await openEstop(config.estop, log);
    closers.push(() => estop.close());
    if (config.safety.deadman) {
      const deadman = await openDeadman(config.safety.deadman, log);
      closers.push(() => deadman.close());
      deadman.start();
      log(`dead-man output: toggling ${deadman.describe} every ${config.safety.deadman.togglePeriodMs} ms while the agent is alive`);
    }
    const motors = await openMotors(config.motors, config.robotModel, clock);
    closers.push(() => motors.bus.close());
    const rosBus = motors.bus instanceof RosMotorBus ? motors.bus : undefined;
    const cameras = config.cameras.map((c) => openCamera(c, clock, log, rosBus));
    for (const camera of cameras) closers.push(() => camera.close?.());
    const mocap = config.mocap ? await openMocap(config.mocap, clock, log) : undefined;
    if (mocap) closers.push(() => mocap.close());
    const policies = policyRuntimeFor(config.policies, log);
    if (policies instanceof ContainerPolicyRuntime) {
      // A crashed agent may have left its policy container running; it would hold GPU memory and a port.
      await policies.cleanup().catch((error: Error) => log(`policy containers: ${error.message}`));
      closers.push(() => policies.close());
    }
    const sceneGate = new SceneReadyGate();
    const scene = new OperatorSceneReset({ motors: motors.bus, clock, estop, gate: sceneGate, ...config.sceneReset, log });
    const hardware: CellHardware = {
      motors: motors.bus,
      cameras,
      ...(motors.gripper ? { gripper: motors.gripper } : {}),
      ...(motors.wristFt ? { wristFt: motors.wristFt } : {}),
      ...(mocap ? { mocap } : {}),
      estop,
      scene,
      clock,
      policies,
      close: closeAll,
    };
    return { hardware, sceneGate, servoBus: motors.servoBus };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
