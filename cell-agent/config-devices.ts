/**
 * The agent config's hardware sections: the robot's motors (serial servo buses or a ROS robot), its
 * cameras, motion capture, the e-stop and the safety section (envelope, dead-man output). Types and
 * their compilers; `compileAgentConfig` (config.ts) calls them.
 */
import type { SafetyEnvelopeOptionsInput } from "./safety/envelope.js";
import type { CameraCalibration } from "./hardware/types.js";
import { loadFirmwarePins } from "../firmware-pins/pins.js";
import { compileRosMotorBusOptions, type RosMotorBusOptions } from "./devices/ros/ros-bus-options.js";
import { V4L2_INPUT_FORMATS, type V4l2InputFormat } from "./devices/camera/ffmpeg-input.js";
import { integer, isObject, number, oneOf, rejectUnknown, section, text } from "./config-fields.js";

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

const DEFAULTS = {
  cameraRateHz: 30,
  cameraWidth: 640,
  cameraHeight: 480,
  natnetLocalPort: 1511,
  estopPollMs: 2,
  deadmanTogglePeriodMs: 50,
};

export function compileSafety(raw: unknown): SafetyConfig {
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

const SERIAL_BUS_KEYS = ["path", "baudRate", "calibration", "transactionTimeoutMs", "retries", "watchdogMs", "effortLimitPercent"];
const SERIAL_MOTOR_KEYS = ["kind", ...SERIAL_BUS_KEYS];

export function compileMotors(raw: unknown, robotModel: string): MotorsConfig | null {
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

export function compileCameras(raw: unknown, rawMotors: unknown): CameraConfig[] {
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

export function compileMocap(raw: unknown): MocapConfig | null {
  if (raw === undefined || raw === null) return null;
  const mocap = section(raw, "mocap", ["kind", "serverAddress", "localPort"]);
  return {
    kind: oneOf(mocap, "kind", "mocap.", ["natnet"] as const),
    serverAddress: text(mocap, "serverAddress", undefined, "mocap."),
    localPort: integer(mocap, "localPort", DEFAULTS.natnetLocalPort, "mocap.", 1, 65535),
  };
}

export function compileEstop(raw: unknown): EstopConfig | null {
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
