/**
 * The cell agent's options: one object, compiled once (defaults filled, values checked, unknown keys
 * rejected) by `compileAgentConfig`.
 */
import type { SafetyEnvelopeOptionsInput } from "./safety/envelope.js";
import type { CameraCalibration } from "./hardware/types.js";
import { readFileSync } from "node:fs";
import { loadFirmwarePins } from "../firmware-pins/pins.js";
import { compileRosMotorBusOptions, type RosMotorBusOptions } from "./devices/ros/ros-bus-options.js";
import { V4L2_INPUT_FORMATS, type V4l2InputFormat } from "./devices/camera/ffmpeg-input.js";
import type { EngineName } from "./policy/container-engine.js";
import { CONTAINER_RUNTIME_DEFAULTS, type ContainerImage } from "./policy/container-runtime.js";

/** One serial servo bus of the robot: one USB adapter, one calibration file; see docs/servo-buses.md. */
export interface SerialBusConfig {
  /** Name in messages and metrics, e.g. "left" (default "arm" for the one-bus form, else "bus<i>"). */
  name: string;
  /** Serial device, e.g. "/dev/serial/by-id/usb-1a86_USB_Single_Serial-if00". Required. */
  path: string;
  /** Bus speed, bit/s (default 1000000). */
  baudRate: number;
  /** Path of this bus's calibration JSON (ids and ranges of its joints). Required. */
  calibration: string;
  /**
   * The robot joints on this bus, in any order; with several buses every joint of the robot is on
   * exactly one. Default (one bus only): every joint of the robot.
   */
  joints: string[];
  /** Driver tuning passed through to SerialServoBus (defaults there: 10 ms, 3 retries, 100 ms watchdog). */
  transactionTimeoutMs?: number;
  retries?: number;
  watchdogMs?: number;
  /** Effort limit written to every servo on open, percent of the register's full scale (default: the catalogue's for the model, else none: the servos keep theirs). */
  effortLimitPercent?: number;
}

/**
 * A robot on serial servo buses (SO-101's Feetech STS3215 on one bus; ALOHA's Dynamixel X on one bus
 * per arm). The file gives either one bus inline (`path`, `calibration`, ...: the SO-101 form) or
 * `buses: [{name, path, calibration, joints, ...}]`; both compile to `buses`.
 */
export interface SerialMotorsConfig {
  kind: "feetech" | "dynamixel";
  buses: SerialBusConfig[];
}

/** A ROS robot through rosbridge; every option of docs/ros-robots.md section 3 except jointNames (from the catalog). */
export interface RosMotorsConfig {
  kind: "ros";
  options: RosMotorBusOptions;
}

export type MotorsConfig = SerialMotorsConfig | RosMotorsConfig;

interface CameraConfigCommon {
  /** Name in recordings and observation contracts, e.g. "top", "wrist". Required. */
  name: string;
  /** Frames per second the agent records (default 30). */
  rateHz: number;
  /** The camera's calibration (intrinsics and extrinsics, hardware/types.ts CameraCalibration); recorded in every episode. Optional. */
  calibration?: CameraCalibration;
}

/** A camera served as MJPEG over HTTP (multipart/x-mixed-replace), e.g. by ustreamer or mjpg-streamer: `url`. */
export interface MjpegHttpCameraConfig extends CameraConfigCommon {
  kind: "mjpeg-http";
  /** http:// URL of the MJPEG stream, e.g. "http://127.0.0.1:8080/stream.mjpg". */
  url: string;
}

/**
 * A V4L2/UVC camera the agent reads itself through ffmpeg: `device`. The device "testsrc2" is
 * ffmpeg's synthetic camera (a moving test pattern), for trying a cell without one.
 */
export interface V4l2CameraConfig extends CameraConfigCommon {
  kind: "v4l2";
  /** "/dev/videoN", a stable "/dev/v4l/by-id/..." link, or "testsrc2". */
  device: string;
  /** The format asked of the camera (default "mjpeg"; `cell-agent cameras` lists what each offers). */
  inputFormat: V4l2InputFormat;
  /** Frame size asked of the camera, pixels (default 640 x 480). */
  width: number;
  height: number;
  /** The rate asked of the camera, frames per second (default: rateHz). */
  frameRateHz: number;
}

/** A camera on the ROS robot's own image topic, read over the rosbridge link of `motors` (kind "ros"): `rosTopic`. */
export interface RosCameraConfig extends CameraConfigCommon {
  kind: "ros";
  /** e.g. "/camera/color/image_raw/compressed". */
  rosTopic: string;
  /** "sensor_msgs/msg/CompressedImage" (default; JPEG) or "sensor_msgs/msg/Image" (rgb8, bgr8, mono8). */
  rosType: string;
}

export type CameraConfig = MjpegHttpCameraConfig | V4l2CameraConfig | RosCameraConfig;

export interface MocapConfig {
  kind: "natnet";
  /** IP address of the Motive/NatNet server. Required. */
  serverAddress: string;
  /** Local UDP port for NatNet data (default 1511). */
  localPort: number;
}

/** Where the e-stop contact is read. Pressed is the fail-safe side: a cut wire reads as pressed. */
export type EstopConfig =
  | { kind: "serial"; path: string; line: "cts" | "dsr" | "dcd"; pressedWhen: "deasserted" | "asserted"; pollMs: number }
  | { kind: "gpio"; chip: string; line: number; pressedWhen: "high" | "low"; pollMs: number };

/** The dead-man output for a hardware watchdog relay (docs/safety.md, section 3). */
export type DeadmanConfig =
  | { kind: "serial"; path: string; line: "dtr" | "rts"; togglePeriodMs: number }
  | { kind: "gpio"; chip: string; line: number; togglePeriodMs: number };

/** The `safety` section (docs/safety.md). */
export interface SafetyConfig {
  /** The safety envelope's options (cell-agent/safety/envelope.ts), checked against the robot's joints when the agent starts (default {}: the envelope's defaults). */
  envelope: SafetyEnvelopeOptionsInput;
  /** The dead-man output (default null: none). */
  deadman: DeadmanConfig | null;
}

/** How the cell runs `container` policies (docs/install-cell-agent.md, "Policies"). */
export interface PoliciesConfig {
  /** "none" (default: the cell runs no images) or "container" (an OCI engine runs them). */
  runtime: "none" | "container";
  /** "docker" or "podman" (default: whichever is on PATH, docker first). */
  engine?: EngineName;
  /** GPUs of policy containers: false (default), true for every one (`--gpus all`), or device indices (`--gpus device=0`). */
  gpus: boolean | number[];
  /** A policy container's memory limit, docker's `--memory` (default "16g"). */
  memory: string;
  /** "internal" (default: the `assay-policy` internal network, no route off the host) or "published" (127.0.0.1 port; rootless podman). */
  network: "internal" | "published";
  /** From starting an image until its server answers, ms (default 120000). */
  startTimeoutMs: number;
  /** latency_budget_ms a policy container is held to each step (default 200). */
  latencyBudgetMs: number;
  /** A fresh container's first inference (loading, compiling) may take this long, never charged as latency, ms (default 120000). */
  warmupMs: number;
  /** A run's container, kept between its episodes, is removed after this long without one, ms (default 600000). */
  idleStopMs: number;
  /** The images this cell runs, reported to the coordinator; a bare string is `{image}` with the defaults. */
  images: ContainerImage[];
}

export interface SceneResetConfig {
  /** How long the agent waits for a technician's POST /scene-ready after homing, ms (default 600000). */
  confirmTimeoutMs: number;
  /** How long homing to the plan's home pose may take, ms (default 5000). */
  homingMs: number;
}

export interface AgentConfig {
  /** Cell identifier known to the coordinator, e.g. "so101-a". Required. */
  cellId: string;
  /**
   * host:port of each coordinator's CellLink server, in the order the agent tries them (default
   * ["127.0.0.1:50051"]). The file may give one address as "coordinatorAddress" instead.
   */
  coordinatorAddresses: string[];
  /** Bearer token sent as gRPC metadata on every call. Required. */
  cellToken: string;
  /** Robot model id from firmware-pins' catalog, e.g. "so101". Required. */
  robotModel: string;
  /** Environment pin the cell sits in, e.g. "tabletop@1". Required. */
  environment: string;
  /** Directory for the outbox, recordings and upload queue. Required. */
  dataDir: string;
  /** Heartbeat period, ms (default 1000). */
  heartbeatIntervalMs: number;
  /** Reconnect backoff (defaults 200 ms, 10000 ms, jitter 0.5). */
  reconnect: { initialMs: number; maxMs: number; jitter: number };
  /** Bytes per UploadArtifact chunk (default 262144). */
  uploadChunkBytes: number;
  /** The arm or robot (default null: none; `cell-agent run` requires one). */
  motors: MotorsConfig | null;
  /** Cameras: V4L2/UVC devices read through ffmpeg, or MJPEG-over-HTTP streams (default []). */
  cameras: CameraConfig[];
  /** Motion capture (default null: none). */
  mocap: MocapConfig | null;
  /** The e-stop input (default null; `cell-agent run` requires one). */
  estop: EstopConfig | null;
  /** Loopback port of the agent's /metrics and /scene-ready endpoint (default 9464; 0 = any free port). */
  metricsPort: number;
  /** Policy runtime (default {runtime: "none", gpus: false, startTimeoutMs: 120000, latencyBudgetMs: 200, images: []}). */
  policies: PoliciesConfig;
  /** Real-cell scene reset (default {confirmTimeoutMs: 600000, homingMs: 5000}). */
  sceneReset: SceneResetConfig;
  /** Safety envelope and dead-man output (default {envelope: {}, deadman: null}). */
  safety: SafetyConfig;
  /**
   * A person at the operator station judges success (the cell offers the `operator` instrument): after an
   * episode of a task with operator.success the agent waits up to `timeoutMs` for the label (default
   * 600000), then reports the episode unlabelled. Default null: the cell offers no labels.
   */
  labels: { timeoutMs: number } | null;
  /**
   * A person at the operator station performs a run's interventions (on_stall, scripted): an offer stands
   * `offerTimeoutMs` (default 60000) before the episode goes on without help; once the person pressed
   * Intervene the arm is held up to `holdTimeoutMs` (default 600000) for Done, else the attempt ends.
   */
  interventions: { offerTimeoutMs: number; holdTimeoutMs: number };
}

const DEFAULTS = {
  coordinatorAddresses: ["127.0.0.1:50051"],
  heartbeatIntervalMs: 1000,
  reconnect: { initialMs: 200, maxMs: 10_000, jitter: 0.5 },
  uploadChunkBytes: 262_144,
  metricsPort: 9464,
  cameraRateHz: 30,
  cameraWidth: 640,
  cameraHeight: 480,
  natnetLocalPort: 1511,
  estopPollMs: 2,
  sceneReset: { confirmTimeoutMs: 600_000, homingMs: 5000 },
  interventions: { offerTimeoutMs: 60_000, holdTimeoutMs: 600_000 },
  deadmanTogglePeriodMs: 50,
};

const TOP_KEYS = [
  "cellId", "coordinatorAddresses", "coordinatorAddress", "cellToken", "robotModel", "environment", "dataDir", "heartbeatIntervalMs", "reconnect", "uploadChunkBytes",
  "motors", "cameras", "mocap", "estop", "metricsPort", "policies", "sceneReset", "safety", "labels", "interventions",
];
const RECONNECT_KEYS = ["initialMs", "maxMs", "jitter"];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function rejectUnknown(obj: Record<string, unknown>, known: string[], where: string): void {
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) {
      throw new Error(`unknown agent config key "${where}${key}"; known keys: ${known.join(", ")}`);
    }
  }
}

function text(obj: Record<string, unknown>, key: string, fallback?: string, where = ""): string {
  const value = obj[key] ?? fallback;
  if (typeof value !== "string" || value.trim() === "") {
    throw new Error(`agent config "${where}${key}" must be a non-empty string; got ${JSON.stringify(value)}`);
  }
  return value;
}

function number(obj: Record<string, unknown>, key: string, fallback: number, where: string, min: number, max = Infinity): number {
  const value = obj[key] ?? fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw new Error(`agent config "${where}${key}" must be a number in [${min}, ${max}]; got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Fills defaults, validates, and rejects unknown keys with a message naming the key. */
export function compileAgentConfig(raw: unknown): AgentConfig {
  if (!isObject(raw)) throw new Error(`agent config must be an object; got ${JSON.stringify(raw)}`);
  rejectUnknown(raw, TOP_KEYS, "");
  const reconnectRaw = raw.reconnect ?? {};
  if (!isObject(reconnectRaw)) throw new Error(`agent config "reconnect" must be an object; got ${JSON.stringify(reconnectRaw)}`);
  rejectUnknown(reconnectRaw, RECONNECT_KEYS, "reconnect.");
  const reconnect = {
    initialMs: number(reconnectRaw, "initialMs", DEFAULTS.reconnect.initialMs, "reconnect.", 1),
    maxMs: number(reconnectRaw, "maxMs", DEFAULTS.reconnect.maxMs, "reconnect.", 1),
    jitter: number(reconnectRaw, "jitter", DEFAULTS.reconnect.jitter, "reconnect.", 0, 1),
  };
  if (reconnect.maxMs < reconnect.initialMs) {
    throw new Error(`agent config "reconnect.maxMs" (${reconnect.maxMs}) must be at least "reconnect.initialMs" (${reconnect.initialMs})`);
  }
  const config: AgentConfig = {
    cellId: text(raw, "cellId"),
    coordinatorAddresses: compileCoordinatorAddresses(raw),
    cellToken: text(raw, "cellToken"),
    robotModel: text(raw, "robotModel"),
    environment: text(raw, "environment"),
    dataDir: text(raw, "dataDir"),
    heartbeatIntervalMs: number(raw, "heartbeatIntervalMs", DEFAULTS.heartbeatIntervalMs, "", 10),
    reconnect,
    uploadChunkBytes: Math.floor(number(raw, "uploadChunkBytes", DEFAULTS.uploadChunkBytes, "", 1024, 4 * 1024 * 1024)),
    motors: compileMotors(raw.motors, text(raw, "robotModel")),
    cameras: compileCameras(raw.cameras, raw.motors),
    mocap: compileMocap(raw.mocap),
    estop: compileEstop(raw.estop),
    metricsPort: integer(raw, "metricsPort", DEFAULTS.metricsPort, "", 0, 65535),
    policies: compilePolicies(raw.policies),
    sceneReset: compileSceneReset(raw.sceneReset),
    safety: compileSafety(raw.safety),
    labels: raw.labels === undefined || raw.labels === null ? null : compileLabels(raw.labels),
    interventions: compileInterventions(raw.interventions),
  };
  const deadman = config.safety.deadman;
  if (deadman?.kind === "serial" && config.estop?.kind === "serial" && deadman.path === config.estop.path) {
    throw new Error(`agent config "safety.deadman.path" is the e-stop's serial port (${JSON.stringify(deadman.path)}), whose RTS and DTR feed the e-stop loop; give the dead-man output its own serial adapter`);
  }
  return config;
}

function compileSafety(raw: unknown): SafetyConfig {
  if (raw === undefined || raw === null) return { envelope: {}, deadman: null };
  const safety = section(raw, "safety", ["envelope", "deadman"]);
  const envelope = safety.envelope ?? {};
  if (!isObject(envelope)) throw new Error(`agent config "safety.envelope" must be an object (docs/safety.md, "The safety envelope"); got ${JSON.stringify(envelope)}`);
  return { envelope: envelope as SafetyEnvelopeOptionsInput, deadman: compileDeadman(safety.deadman) };
}

function compileDeadman(raw: unknown): DeadmanConfig | null {
  if (raw === undefined || raw === null) return null;
  if (!isObject(raw)) throw new Error(`agent config "safety.deadman" must be an object; got ${JSON.stringify(raw)}`);
  const kind = oneOf(raw, "kind", "safety.deadman.", ["serial", "gpio"] as const);
  if (kind === "serial") {
    const deadman = section(raw, "safety.deadman", ["kind", "path", "line", "togglePeriodMs"]);
    return {
      kind,
      path: text(deadman, "path", undefined, "safety.deadman."),
      line: oneOf(deadman, "line", "safety.deadman.", ["dtr", "rts"] as const, "dtr"),
      togglePeriodMs: integer(deadman, "togglePeriodMs", DEFAULTS.deadmanTogglePeriodMs, "safety.deadman.", 1, 10_000),
    };
  }
  const deadman = section(raw, "safety.deadman", ["kind", "chip", "line", "togglePeriodMs"]);
  if (deadman.line === undefined) throw new Error(`agent config "safety.deadman.line" is required for a GPIO dead-man output: the line number on the chip, e.g. 27`);
  return {
    kind,
    chip: text(deadman, "chip", "gpiochip0", "safety.deadman."),
    line: integer(deadman, "line", -1, "safety.deadman.", 0, 1023),
    togglePeriodMs: integer(deadman, "togglePeriodMs", DEFAULTS.deadmanTogglePeriodMs, "safety.deadman.", 1, 10_000),
  };
}

/**
 * "coordinatorAddresses" (a list), or the older "coordinatorAddress" (one address) as a list of one;
 * not both, so no one has to guess which the agent uses.
 */
function compileCoordinatorAddresses(raw: Record<string, unknown>): string[] {
  // null is "not given", as for every other key.
  const single = raw.coordinatorAddress ?? undefined;
  const list = raw.coordinatorAddresses ?? undefined;
  if (single !== undefined && list !== undefined) {
    throw new Error(`agent config gives both "coordinatorAddress" (${JSON.stringify(single)}) and "coordinatorAddresses" (${JSON.stringify(list)}); keep only "coordinatorAddresses", listing every coordinator the cell may use`);
  }
  if (list === undefined) return single === undefined ? [...DEFAULTS.coordinatorAddresses] : [coordinatorAddress(single, "coordinatorAddress")];
  if (!Array.isArray(list) || list.length === 0) {
    throw new Error(`agent config "coordinatorAddresses" must be a non-empty list of "host:port", e.g. ["coord-a.lab:50051", "coord-b.lab:50051"]; got ${JSON.stringify(list)}`);
  }
  const addresses = list.map((entry, i) => coordinatorAddress(entry, `coordinatorAddresses[${i}]`));
  // Host names are case-insensitive: "Coord.lab:50051" and "coord.lab:50051" are one coordinator.
  const keys = addresses.map((a) => a.toLowerCase());
  const second = keys.findIndex((k, i) => keys.indexOf(k) !== i);
  if (second >= 0) {
    const first = keys.indexOf(keys[second]!);
    throw new Error(`agent config "coordinatorAddresses" lists ${JSON.stringify(addresses[first])} twice (entries ${first} and ${second}); list each coordinator once`);
  }
  return addresses;
}

function coordinatorAddress(value: unknown, where: string): string {
  const match = typeof value === "string" ? /^[^\s:]+:(\d+)$/.exec(value) : null;
  const port = match ? Number(match[1]) : 0;
  if (!match || port < 1 || port > 65535) {
    throw new Error(`agent config "${where}" must be "host:port" with a port from 1 to 65535, e.g. "coord.lab:50051"; got ${JSON.stringify(value)}`);
  }
  return value as string;
}

function integer(obj: Record<string, unknown>, key: string, fallback: number, where: string, min: number, max: number): number {
  const value = number(obj, key, fallback, where, min, max);
  if (!Number.isInteger(value)) throw new Error(`agent config "${where}${key}" must be an integer; got ${value}`);
  return value;
}

function section(value: unknown, key: string, known: string[]): Record<string, unknown> {
  if (!isObject(value)) throw new Error(`agent config "${key}" must be an object; got ${JSON.stringify(value)}`);
  rejectUnknown(value, known, `${key}.`);
  return value;
}

function oneOf<T extends string>(obj: Record<string, unknown>, key: string, where: string, allowed: readonly T[], fallback?: T): T {
  const value = obj[key] ?? fallback;
  if (!allowed.includes(value as T)) throw new Error(`agent config "${where}${key}" must be one of ${allowed.map((a) => `"${a}"`).join(", ")}; got ${JSON.stringify(value)}`);
  return value as T;
}

const SERIAL_BUS_KEYS = ["path", "baudRate", "calibration", "transactionTimeoutMs", "retries", "watchdogMs", "effortLimitPercent"];
const SERIAL_MOTOR_KEYS = ["kind", ...SERIAL_BUS_KEYS];

function compileMotors(raw: unknown, robotModel: string): MotorsConfig | null {
  if (raw === undefined || raw === null) return null;
  if (!isObject(raw)) throw new Error(`agent config "motors" must be an object; got ${JSON.stringify(raw)}`);
  const kind = oneOf(raw, "kind", "motors.", ["feetech", "dynamixel", "ros"] as const);
  const model = loadFirmwarePins().models.find((m) => m.id === robotModel);
  if (kind === "ros") {
    const { kind: _kind, ...rest } = raw;
    const jointNames = (rest.jointNames as string[] | undefined) ?? model?.joints;
    if (!jointNames) throw new Error(`agent config "motors": robot model "${robotModel}" is not in firmware-pins/catalog.json, so its joints are unknown; set motors.jointNames`);
    try {
      return { kind, options: compileRosMotorBusOptions({ ...rest, jointNames }) };
    } catch (error) {
      throw new Error(`agent config "motors": ${(error as Error).message}`);
    }
  }
  if (!model) throw new Error(`agent config "robotModel" ${JSON.stringify(robotModel)} is not in firmware-pins/catalog.json, so the joints on the servo bus are unknown; known models: ${loadFirmwarePins().models.map((m) => m.id).join(", ")}`);
  if (raw.buses === undefined) {
    rejectUnknown(raw, SERIAL_MOTOR_KEYS, "motors.");
    const { kind: _kind, ...bus } = raw;
    return { kind, buses: [compileSerialBus(bus, "motors.", "arm", model.joints)] };
  }
  rejectUnknown(raw, ["kind", "buses"], "motors.");
  const list = raw.buses;
  if (!Array.isArray(list) || list.length === 0 || list.length > 16) {
    throw new Error(`agent config "motors.buses" must list 1 to 16 buses, each {name, path, calibration, joints}; got ${JSON.stringify(list)?.slice(0, 200)}`);
  }
  const buses = list.map((entry, i) => {
    const where = `motors.buses[${i}].`;
    if (!isObject(entry)) throw new Error(`agent config "motors.buses[${i}]" must be an object {name, path, calibration, joints}; got ${JSON.stringify(entry)?.slice(0, 200)}`);
    rejectUnknown(entry, ["name", "joints", ...SERIAL_BUS_KEYS], where);
    return compileSerialBus(entry, where, text(entry, "name", `bus${i}`, where), list.length === 1 ? model.joints : null);
  });
  const check = (values: string[], what: string) => {
    const twice = values.find((v, i) => values.indexOf(v) !== i);
    if (twice !== undefined) throw new Error(`agent config "motors.buses" ${what} ${JSON.stringify(twice)} twice; each must be unique`);
  };
  check(buses.map((b) => b.name), "names the bus");
  check(buses.map((b) => b.path), "opens the device");
  check(buses.flatMap((b) => b.joints), "puts the joint");
  const placed = new Set(buses.flatMap((b) => b.joints));
  const unknown = [...placed].filter((j) => !model.joints.includes(j));
  if (unknown.length) throw new Error(`agent config "motors.buses" names joint(s) ${unknown.map((j) => JSON.stringify(j).slice(0, 60)).join(", ")}, which ${robotModel} lacks; its joints: ${model.joints.join(", ")}`);
  const missing = model.joints.filter((j) => !placed.has(j));
  if (missing.length) throw new Error(`agent config "motors.buses" puts joint(s) ${missing.join(", ")} of ${robotModel} on no bus; list each joint in the "joints" of the bus it is wired to`);
  return { kind, buses };
}

/** One bus; `allJoints` is the robot's joint list when the bus may carry them all by default (one bus). */
function compileSerialBus(raw: Record<string, unknown>, where: string, name: string, allJoints: readonly string[] | null): SerialBusConfig {
  let joints: string[];
  if (raw.joints === undefined) {
    if (!allJoints) throw new Error(`agent config "${where}joints" is required with several buses: the robot joints wired to this bus, e.g. ["left_waist", "left_shoulder"]`);
    joints = [...allJoints];
  } else {
    if (!Array.isArray(raw.joints) || raw.joints.length === 0 || !raw.joints.every((j) => typeof j === "string" && j !== "")) {
      throw new Error(`agent config "${where}joints" must be a non-empty list of joint names; got ${JSON.stringify(raw.joints)?.slice(0, 200)}`);
    }
    joints = raw.joints as string[];
  }
  const bus: SerialBusConfig = {
    name,
    path: text(raw, "path", undefined, where),
    baudRate: integer(raw, "baudRate", 1_000_000, where, 1, 10_000_000),
    calibration: text(raw, "calibration", undefined, where),
    joints,
  };
  if (raw.transactionTimeoutMs !== undefined) bus.transactionTimeoutMs = number(raw, "transactionTimeoutMs", 0, where, 0);
  if (raw.retries !== undefined) bus.retries = integer(raw, "retries", 0, where, 0, 100);
  if (raw.watchdogMs !== undefined) bus.watchdogMs = number(raw, "watchdogMs", 0, where, 0);
  if (raw.effortLimitPercent !== undefined) bus.effortLimitPercent = number(raw, "effortLimitPercent", 100, where, 1, 100);
  return bus;
}

const ROS_IMAGE_TYPES = ["sensor_msgs/msg/CompressedImage", "sensor_msgs/CompressedImage", "sensor_msgs/msg/Image", "sensor_msgs/Image"];

function compileCameras(raw: unknown, rawMotors: unknown): CameraConfig[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new Error(`agent config "cameras" must be an array; got ${JSON.stringify(raw)}`);
  const cameras = raw.map((entry, i) => {
    const where = `cameras[${i}]`;
    const camera = section(entry, where, ["name", "url", "device", "inputFormat", "width", "height", "frameRateHz", "rosTopic", "rosType", "rateHz", "calibration"]);
    const calibration = camera.calibration === undefined ? {} : { calibration: compileCameraCalibration(camera.calibration, `${where}.calibration`) };
    const common = { name: text(camera, "name", undefined, `${where}.`), rateHz: number(camera, "rateHz", DEFAULTS.cameraRateHz, `${where}.`, 0.1, 240), ...calibration };
    if ([camera.url, camera.device, camera.rosTopic].filter((v) => v !== undefined).length !== 1) {
      throw new Error(`agent config "${where}" needs exactly one of "device" (a V4L2 camera such as "/dev/video0"), "url" (an MJPEG-over-HTTP stream) or "rosTopic" (an image topic of a ROS robot); got ${JSON.stringify({ device: camera.device, url: camera.url, rosTopic: camera.rosTopic })}`);
    }
    if (camera.rosTopic !== undefined) {
      if (!isObject(rawMotors) || rawMotors.kind !== "ros") throw new Error(`agent config "${where}.rosTopic" needs a ROS robot: its images come over the rosbridge link of "motors" (kind "ros")`);
      for (const key of ["inputFormat", "width", "height", "frameRateHz"]) {
        if (camera[key] !== undefined) throw new Error(`agent config "${where}.${key}" applies to "device" cameras only; a ROS topic has the size its driver publishes`);
      }
      const rosTopic = text(camera, "rosTopic", undefined, `${where}.`);
      if (!/^\/[A-Za-z0-9_/~]+$/.test(rosTopic)) throw new Error(`agent config "${where}.rosTopic" must be a ROS topic name such as "/camera/color/image_raw/compressed"; got ${JSON.stringify(rosTopic).slice(0, 120)}`);
      return { kind: "ros" as const, ...common, rosTopic, rosType: oneOf(camera, "rosType", `${where}.`, ROS_IMAGE_TYPES, "sensor_msgs/msg/CompressedImage") };
    }
    if (camera.rosType !== undefined) throw new Error(`agent config "${where}.rosType" applies to "rosTopic" cameras only`);
    if (camera.device !== undefined) {
      const device = text(camera, "device", undefined, `${where}.`);
      if (!/^\/dev\/\S+$/.test(device) && device !== "testsrc2") {
        throw new Error(`agent config "${where}.device" must be a video device path such as "/dev/video0" or "/dev/v4l/by-id/...", or "testsrc2" for ffmpeg's synthetic camera; got ${JSON.stringify(device).slice(0, 120)}`);
      }
      return {
        kind: "v4l2" as const, ...common, device,
        inputFormat: oneOf(camera, "inputFormat", `${where}.`, V4L2_INPUT_FORMATS, "mjpeg"),
        width: integer(camera, "width", DEFAULTS.cameraWidth, `${where}.`, 16, 8192),
        height: integer(camera, "height", DEFAULTS.cameraHeight, `${where}.`, 16, 8192),
        frameRateHz: number(camera, "frameRateHz", common.rateHz, `${where}.`, 0.1, 240),
      };
    }
    for (const key of ["inputFormat", "width", "height", "frameRateHz"]) {
      if (camera[key] !== undefined) throw new Error(`agent config "${where}.${key}" applies to "device" cameras only; an MJPEG stream at "url" has the format its streamer sends`);
    }
    const url = text(camera, "url", undefined, `${where}.`);
    if (!/^https?:\/\/\S+$/.test(url)) throw new Error(`agent config "${where}.url" must be an http:// URL of an MJPEG stream; got ${JSON.stringify(url)}`);
    return { kind: "mjpeg-http" as const, ...common, url };
  });
  const names = cameras.map((c) => c.name);
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) throw new Error(`agent config "cameras" names "${duplicate}" twice; camera names must be unique`);
  return cameras;
}

function compileCameraCalibration(raw: unknown, where: string): CameraCalibration {
  const c = section(raw, where, ["width", "height", "model", "fx", "fy", "cx", "cy", "distortion", "metres_per_px", "extrinsics"]);
  const model = oneOf(c, "model", `${where}.`, ["pinhole", "orthographic"] as const);
  const needed = model === "pinhole" ? ["fx", "fy", "cx", "cy"] : ["metres_per_px"];
  const calibration: CameraCalibration = {
    width: integer(c, "width", 0, `${where}.`, 1, 100_000), height: integer(c, "height", 0, `${where}.`, 1, 100_000), model,
    extrinsics: { parent_frame: "world", translation_m: [0, 0, 0], rotation_xyzw: [0, 0, 0, 1] },
  };
  for (const key of needed) (calibration as unknown as Record<string, number>)[key] = number(c, key, Number.NaN, `${where}.`, 0);
  if (c.distortion !== undefined) {
    if (!Array.isArray(c.distortion) || !c.distortion.every(Number.isFinite)) throw new Error(`agent config "${where}.distortion" must be an array of numbers (plumb_bob k1, k2, p1, p2, k3); got ${JSON.stringify(c.distortion)}`);
    calibration.distortion = c.distortion as number[];
  }
  const e = section(c.extrinsics, `${where}.extrinsics`, ["parent_frame", "translation_m", "rotation_xyzw"]);
  const vector = (key: string, length: number) => {
    const v = e[key];
    if (!Array.isArray(v) || v.length !== length || !v.every(Number.isFinite)) throw new Error(`agent config "${where}.extrinsics.${key}" must be ${length} numbers; got ${JSON.stringify(v)}`);
    return v as number[];
  };
  calibration.extrinsics = {
    parent_frame: text(e, "parent_frame", "world", `${where}.extrinsics.`),
    translation_m: vector("translation_m", 3) as [number, number, number],
    rotation_xyzw: vector("rotation_xyzw", 4) as [number, number, number, number],
  };
  return calibration;
}

function compileMocap(raw: unknown): MocapConfig | null {
  if (raw === undefined || raw === null) return null;
  const mocap = section(raw, "mocap", ["kind", "serverAddress", "localPort"]);
  return {
    kind: oneOf(mocap, "kind", "mocap.", ["natnet"] as const),
    serverAddress: text(mocap, "serverAddress", undefined, "mocap."),
    localPort: integer(mocap, "localPort", DEFAULTS.natnetLocalPort, "mocap.", 1, 65535),
  };
}

function compileEstop(raw: unknown): EstopConfig | null {
  if (raw === undefined || raw === null) return null;
  if (!isObject(raw)) throw new Error(`agent config "estop" must be an object; got ${JSON.stringify(raw)}`);
  const kind = oneOf(raw, "kind", "estop.", ["serial", "gpio"] as const);
  if (kind === "serial") {
    const estop = section(raw, "estop", ["kind", "path", "line", "pressedWhen", "pollMs"]);
    return {
      kind,
      path: text(estop, "path", undefined, "estop."),
      line: oneOf(estop, "line", "estop.", ["cts", "dsr", "dcd"] as const),
      pressedWhen: oneOf(estop, "pressedWhen", "estop.", ["deasserted", "asserted"] as const, "deasserted"),
      pollMs: number(estop, "pollMs", DEFAULTS.estopPollMs, "estop.", 1, 100),
    };
  }
  const estop = section(raw, "estop", ["kind", "chip", "line", "pressedWhen", "pollMs"]);
  if (estop.line === undefined) throw new Error(`agent config "estop.line" is required for a GPIO e-stop: the line number on the chip, e.g. 17`);
  return {
    kind,
    chip: text(estop, "chip", "gpiochip0", "estop."),
    line: integer(estop, "line", -1, "estop.", 0, 1023),
    pressedWhen: oneOf(estop, "pressedWhen", "estop.", ["high", "low"] as const, "high"),
    pollMs: number(estop, "pollMs", DEFAULTS.estopPollMs, "estop.", 1, 100),
  };
}

const POLICY_DEFAULTS = {
  gpus: false as boolean | number[], memory: CONTAINER_RUNTIME_DEFAULTS.memory as string, network: CONTAINER_RUNTIME_DEFAULTS.network as "internal" | "published",
  startTimeoutMs: CONTAINER_RUNTIME_DEFAULTS.startTimeoutMs, latencyBudgetMs: CONTAINER_RUNTIME_DEFAULTS.latencyBudgetMs,
  warmupMs: CONTAINER_RUNTIME_DEFAULTS.warmupMs, idleStopMs: CONTAINER_RUNTIME_DEFAULTS.idleStopMs,
};
/** An image reference as docker and podman take it; never starting with "-", so it cannot pass for an option. */
const IMAGE_REFERENCE = /^[A-Za-z0-9][A-Za-z0-9._\-/:@]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function compilePolicies(raw: unknown): PoliciesConfig {
  if (raw === undefined || raw === null) return { runtime: "none", ...POLICY_DEFAULTS, images: [] };
  const policies = section(raw, "policies", ["runtime", "engine", "gpus", "memory", "network", "startTimeoutMs", "latencyBudgetMs", "warmupMs", "idleStopMs", "images"]);
  const images = policies.images ?? [];
  if (!Array.isArray(images)) throw new Error(`agent config "policies.images" must be an array of images (names, or {image, protocol, port, observationMap, env}); got ${JSON.stringify(images)}`);
  const compiled = images.map((entry, i) => compilePolicyImage(entry, `policies.images[${i}]`));
  const names = compiled.map((c) => c.image);
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) throw new Error(`agent config "policies.images" names "${duplicate}" twice; list each image once`);
  const gpus = policies.gpus;
  if (gpus !== undefined && typeof gpus !== "boolean" && !(Array.isArray(gpus) && gpus.length > 0 && gpus.every((i) => Number.isInteger(i) && i >= 0 && i < 64) && new Set(gpus).size === gpus.length)) {
    throw new Error(`agent config "policies.gpus" must be true, false, or GPU indices such as [0] or [0, 1] (as nvidia-smi numbers them); got ${JSON.stringify(gpus)?.slice(0, 100)}`);
  }
  const memory = policies.memory;
  if (memory !== undefined && (typeof memory !== "string" || !/^[1-9][0-9]*[bkmg]?$/i.test(memory))) {
    throw new Error(`agent config "policies.memory" must be a memory size as docker's --memory takes it, e.g. "16g" or "8192m"; got ${JSON.stringify(memory)?.slice(0, 100)}`);
  }
  return {
    runtime: oneOf(policies, "runtime", "policies.", ["none", "container"] as const, "none"),
    ...(policies.engine !== undefined ? { engine: oneOf(policies, "engine", "policies.", ["docker", "podman"] as const) } : {}),
    gpus: (gpus as boolean | number[] | undefined) ?? POLICY_DEFAULTS.gpus,
    memory: (memory as string | undefined) ?? POLICY_DEFAULTS.memory,
    network: oneOf(policies, "network", "policies.", ["internal", "published"] as const, POLICY_DEFAULTS.network),
    startTimeoutMs: number(policies, "startTimeoutMs", POLICY_DEFAULTS.startTimeoutMs, "policies.", 1000, 3_600_000),
    latencyBudgetMs: number(policies, "latencyBudgetMs", POLICY_DEFAULTS.latencyBudgetMs, "policies.", 1, 60_000),
    warmupMs: number(policies, "warmupMs", POLICY_DEFAULTS.warmupMs, "policies.", 1, 3_600_000),
    idleStopMs: number(policies, "idleStopMs", POLICY_DEFAULTS.idleStopMs, "policies.", 1000, 86_400_000),
    images: compiled,
  };
}

function compilePolicyImage(raw: unknown, where: string): ContainerImage {
  if (typeof raw !== "string" && !isObject(raw)) throw new Error(`agent config "${where}" must be an image name or {image, protocol, port, observationMap, env}; got ${JSON.stringify(raw)}`);
  const entry = typeof raw === "string" ? { image: raw } : section(raw, where, ["image", "protocol", "port", "observationMap", "env"]);
  const image = entry.image;
  if (typeof image !== "string" || !IMAGE_REFERENCE.test(image)) {
    throw new Error(`agent config "${where}${typeof raw === "string" ? "" : ".image"}" must be an image reference such as "ghcr.io/acme/picker:3"; got ${JSON.stringify(image)}`);
  }
  const env = entry.env ?? {};
  if (!isObject(env) || !Object.entries(env).every(([k, v]) => ENV_NAME.test(k) && typeof v === "string")) {
    throw new Error(`agent config "${where}.env" must map variable names (letters, digits, _) to strings, e.g. {"MODEL_DIR": "/models"}; got ${JSON.stringify(env)}`);
  }
  if (entry.observationMap !== undefined && !isObject(entry.observationMap)) {
    throw new Error(`agent config "${where}.observationMap" must be an object; got ${JSON.stringify(entry.observationMap)}`);
  }
  return {
    image,
    protocol: oneOf(entry, "protocol", `${where}.`, ["json", "openpi"] as const, "json"),
    port: integer(entry, "port", CONTAINER_RUNTIME_DEFAULTS.port, `${where}.`, 1, 65535),
    ...(entry.observationMap !== undefined ? { observationMap: entry.observationMap as Record<string, unknown> } : {}),
    env: { ...(env as Record<string, string>) },
  };
}

function compileSceneReset(raw: unknown): SceneResetConfig {
  const reset = section(raw ?? {}, "sceneReset", ["confirmTimeoutMs", "homingMs"]);
  return {
    confirmTimeoutMs: number(reset, "confirmTimeoutMs", DEFAULTS.sceneReset.confirmTimeoutMs, "sceneReset.", 1000),
    homingMs: number(reset, "homingMs", DEFAULTS.sceneReset.homingMs, "sceneReset.", 0),
  };
}

function compileLabels(raw: unknown): { timeoutMs: number } {
  const labels = section(raw, "labels", ["timeoutMs"]);
  return { timeoutMs: number(labels, "timeoutMs", 600_000, "labels.", 1000) };
}

function compileInterventions(raw: unknown): { offerTimeoutMs: number; holdTimeoutMs: number } {
  const section_ = section(raw ?? {}, "interventions", ["offerTimeoutMs", "holdTimeoutMs"]);
  return {
    offerTimeoutMs: number(section_, "offerTimeoutMs", DEFAULTS.interventions.offerTimeoutMs, "interventions.", 1000),
    holdTimeoutMs: number(section_, "holdTimeoutMs", DEFAULTS.interventions.holdTimeoutMs, "interventions.", 1000),
  };
}

/** Reads a JSON file and compiles it; errors name the file. */
export function loadAgentConfig(path: string): AgentConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`cannot read agent config ${path}: ${(error as Error).message}`);
  }
  try {
    return compileAgentConfig(raw);
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`);
  }
}
