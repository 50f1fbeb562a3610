/**
 * The ROS messages the agent reads and writes through rosbridge, as JSON, checked at the boundary.
 * A parser returns a reason string instead of throwing so the bus can count malformed input and go on.
 */

/** sensor_msgs/JointState as parsed: arrays aligned with `names`; absent arrays are null. */
export interface ParsedJointState {
  names: string[];
  positionRad: number[];
  velocityRadS: number[] | null;
  effort: number[] | null;
  /** header.stamp as ms since the epoch, or null when the message has no usable stamp. */
  stampMs: number | null;
}

export interface ParsedWrench {
  forceN: [number, number, number];
  torqueNm: [number, number, number];
  stampMs: number | null;
}

/** std_srvs SetBool and Trigger share this response. */
export interface SuccessMessageResponse {
  success: boolean;
  message: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function numbers(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((v) => typeof v === "number" && Number.isFinite(v));
}

/** Accepts a ROS 2 stamp {sec, nanosec} or a ROS 1 stamp {secs, nsecs}. */
export function stampToMs(header: unknown): number | null {
  if (!isObject(header) || !isObject(header.stamp)) return null;
  const { sec, nanosec, secs, nsecs } = header.stamp;
  const s = typeof sec === "number" ? sec : secs;
  const ns = typeof nanosec === "number" ? nanosec : nsecs;
  if (typeof s !== "number" || typeof ns !== "number") return null;
  if (s === 0 && ns === 0) return null;
  return s * 1000 + ns / 1e6;
}

export function parseJointState(msg: unknown): Parsed<ParsedJointState> {
  if (!isObject(msg)) return { ok: false, reason: `JointState must be an object; got ${JSON.stringify(msg)}` };
  const { name, position, velocity, effort } = msg;
  if (!Array.isArray(name) || !name.every((n) => typeof n === "string")) {
    return { ok: false, reason: `JointState.name must be an array of strings; got ${JSON.stringify(name)}` };
  }
  if (!numbers(position) || position.length !== name.length) {
    return { ok: false, reason: `JointState.position must be ${name.length} finite numbers; got ${JSON.stringify(position)}` };
  }
  const optional = (field: string, value: unknown): Parsed<number[] | null> => {
    if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) return { ok: true, value: null };
    if (!numbers(value) || value.length !== name.length) {
      return { ok: false, reason: `JointState.${field} must be empty or ${name.length} finite numbers; got ${JSON.stringify(value)}` };
    }
    return { ok: true, value };
  };
  const v = optional("velocity", velocity);
  if (!v.ok) return v;
  const e = optional("effort", effort);
  if (!e.ok) return e;
  return { ok: true, value: { names: name as string[], positionRad: position, velocityRadS: v.value, effort: e.value, stampMs: stampToMs(msg.header) } };
}

function vector3(value: unknown): [number, number, number] | null {
  if (!isObject(value)) return null;
  const { x, y, z } = value;
  if (![x, y, z].every((c) => typeof c === "number" && Number.isFinite(c))) return null;
  return [x as number, y as number, z as number];
}

export function parseWrenchStamped(msg: unknown): Parsed<ParsedWrench> {
  const wrench = isObject(msg) ? msg.wrench : undefined;
  const force = isObject(wrench) ? vector3(wrench.force) : null;
  const torque = isObject(wrench) ? vector3(wrench.torque) : null;
  if (!force || !torque) return { ok: false, reason: `WrenchStamped needs wrench.force and wrench.torque {x, y, z}; got ${JSON.stringify(msg)}` };
  return { ok: true, value: { forceN: force, torqueNm: torque, stampMs: stampToMs((msg as Record<string, unknown>).header) } };
}

export function parseSuccessMessage(values: unknown, service: string): Parsed<SuccessMessageResponse> {
  if (!isObject(values) || typeof values.success !== "boolean" || typeof values.message !== "string") {
    return { ok: false, reason: `${service} must answer {success: bool, message: string}; got ${JSON.stringify(values)}` };
  }
  return { ok: true, value: { success: values.success, message: values.message } };
}

/** std_msgs/Float64MultiArray with an empty layout, as position controllers expect. */
export function float64MultiArray(data: readonly number[]): { layout: { dim: never[]; data_offset: number }; data: number[] } {
  return { layout: { dim: [], data_offset: 0 }, data: [...data] };
}

/** Largest image the agent takes from a ROS topic: 16 MB of JPEG, or 4096 x 4096 pixels raw (it encodes those itself). */
export const MAX_IMAGE_BYTES = 16 * 1024 * 1024;
export const MAX_IMAGE_PIXELS = 4096 * 4096;

/** A camera frame from sensor_msgs/CompressedImage or sensor_msgs/Image, as parsed. */
export interface ParsedImage {
  /** JPEG bytes (CompressedImage "jpeg"), or raw pixels (Image) with their encoding. */
  jpeg?: Uint8Array;
  raw?: { width: number; height: number; encoding: "rgb8" | "bgr8" | "mono8"; step: number; data: Uint8Array };
  /** header.stamp in ns (the robot's ROS time), or null when the message has no usable stamp. */
  stampNs: bigint | null;
}

/** Accepts a ROS 2 stamp {sec, nanosec} or a ROS 1 stamp {secs, nsecs}; null when absent or zero. */
export function stampToNs(header: unknown): bigint | null {
  if (!isObject(header) || !isObject(header.stamp)) return null;
  const { sec, nanosec, secs, nsecs } = header.stamp;
  const s = typeof sec === "number" ? sec : secs;
  const ns = typeof nanosec === "number" ? nanosec : nsecs;
  if (!Number.isInteger(s) || !Number.isInteger(ns) || (s === 0 && ns === 0)) return null;
  return BigInt(s as number) * 1_000_000_000n + BigInt(ns as number);
}

/** rosbridge sends uint8[] as base64 (its default); some bridges send a plain number array. */
function bytesOf(data: unknown): Uint8Array | null {
  if (typeof data === "string") return /^[A-Za-z0-9+/]*={0,2}$/.test(data) ? new Uint8Array(Buffer.from(data, "base64")) : null;
  if (Array.isArray(data) && data.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) return Uint8Array.from(data as number[]);
  return null;
}

/** sensor_msgs/CompressedImage with a JPEG `format` ("jpeg", or image_transport's "rgb8; jpeg compressed bgr8"). */
export function parseCompressedImage(msg: unknown): Parsed<ParsedImage> {
  if (!isObject(msg)) return { ok: false, reason: `CompressedImage must be an object; got ${JSON.stringify(msg)?.slice(0, 100)}` };
  const format = typeof msg.format === "string" ? msg.format : "";
  if (!/jpe?g/i.test(format)) return { ok: false, reason: `CompressedImage.format must be JPEG (e.g. "jpeg"); got ${JSON.stringify(msg.format)?.slice(0, 60)}: republish the camera with image_transport's jpeg compression` };
  if (typeof msg.data === "string" && msg.data.length > (MAX_IMAGE_BYTES * 4) / 3 + 4) return { ok: false, reason: `CompressedImage.data is larger than ${MAX_IMAGE_BYTES} bytes` };
  const jpeg = bytesOf(msg.data);
  if (!jpeg || jpeg.length < 4 || jpeg[0] !== 0xff || jpeg[1] !== 0xd8) return { ok: false, reason: "CompressedImage.data is not a JPEG (base64 of bytes starting FF D8)" };
  return { ok: true, value: { jpeg, stampNs: stampToNs(msg.header) } };
}

/** sensor_msgs/Image in rgb8, bgr8 or mono8. */
export function parseImage(msg: unknown): Parsed<ParsedImage> {
  if (!isObject(msg)) return { ok: false, reason: `Image must be an object; got ${JSON.stringify(msg)?.slice(0, 100)}` };
  const { width, height, encoding, step } = msg;
  if (!Number.isInteger(width) || !Number.isInteger(height) || (width as number) < 1 || (height as number) < 1) {
    return { ok: false, reason: `Image.width and height must be positive integers; got ${JSON.stringify(width)}x${JSON.stringify(height)}` };
  }
  if (encoding !== "rgb8" && encoding !== "bgr8" && encoding !== "mono8") {
    return { ok: false, reason: `Image.encoding must be rgb8, bgr8 or mono8; got ${JSON.stringify(encoding)?.slice(0, 40)}: publish a compressed (jpeg) topic instead` };
  }
  if ((width as number) * (height as number) > MAX_IMAGE_PIXELS) return { ok: false, reason: `Image is ${width}x${height}, more than ${MAX_IMAGE_PIXELS} pixels; publish a smaller or a compressed (jpeg) topic` };
  const channels = encoding === "mono8" ? 1 : 3;
  const rowBytes = typeof step === "number" && step > 0 ? step : (width as number) * channels;
  const data = bytesOf(msg.data);
  if (!data || rowBytes < (width as number) * channels || data.length < rowBytes * (height as number)) {
    return { ok: false, reason: `Image.data must hold ${height} rows of ${rowBytes} bytes; got ${data ? data.length : "no"} bytes` };
  }
  return { ok: true, value: { raw: { width: width as number, height: height as number, encoding, step: rowBytes, data }, stampNs: stampToNs(msg.header) } };
}
