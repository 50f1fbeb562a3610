/**
 * A `Camera` on a ROS image topic, read over the robot's rosbridge link (RosMotorBus.openCamera):
 * sensor_msgs/CompressedImage with JPEG data as it comes, sensor_msgs/Image (rgb8, bgr8, mono8)
 * encoded to JPEG here when a frame's JPEG is first read (a 30 Hz raw topic is mostly superseded before
 * anyone captures it, and encoding 640x480 in JavaScript costs ~10 ms). A frame's capture time is its header stamp (the robot's ROS time) mapped onto
 * the agent clock by `CaptureClock`; a message without a stamp is stamped on arrival.
 */
import jpeg from "jpeg-js";
import type { Camera, CameraCalibration, CameraClockInfo, CameraFrame } from "../../hardware/types.js";
import { CaptureClock } from "../camera/capture-clock.js";
import { jpegSize } from "../camera/mjpeg-camera.js";
import { RosBusError } from "./ros-bus-error.js";
import type { RosLink } from "./ros-link.js";
import { parseCompressedImage, parseImage, type ParsedImage } from "./ros-messages.js";
import { FrameWaiters } from "../camera/frame-waiters.js";

export interface RosCameraOptions {
  name: string;
  /** e.g. "/camera/color/image_raw/compressed". */
  topic: string;
  /** "sensor_msgs/msg/CompressedImage" (default) or "sensor_msgs/msg/Image" (ROS 1 names without /msg/ too). */
  type: string;
  rateHz: number;
  calibration?: CameraCalibration;
  /** A frame older than this on arrival time is stale and `capture()` fails, ms (default 1000). */
  maxFrameAgeMs?: number;
  /** How long `capture()` waits for the first frame, ms (default 5000). */
  firstFrameTimeoutMs?: number;
  /** JPEG quality for raw Image topics, 1..100 (default 85). */
  jpegQuality?: number;
}

const JPEG_QUALITY = 85;

/** True for sensor_msgs/Image in either naming; false for CompressedImage. */
export function isRawImageType(type: string): boolean {
  return /^sensor_msgs\/(msg\/)?Image$/.test(type);
}

function toJpeg(image: ParsedImage, quality: number): Uint8Array {
  if (image.jpeg) return image.jpeg;
  const { width, height, encoding, step, data } = image.raw!;
  const rgba = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      if (encoding === "mono8") {
        const v = data[y * step + x]!;
        rgba[o] = v; rgba[o + 1] = v; rgba[o + 2] = v;
      } else {
        const i = y * step + x * 3;
        const [r, b] = encoding === "rgb8" ? [data[i]!, data[i + 2]!] : [data[i + 2]!, data[i]!];
        rgba[o] = r; rgba[o + 1] = data[i + 1]!; rgba[o + 2] = b;
      }
      rgba[o + 3] = 255;
    }
  }
  return new Uint8Array(jpeg.encode({ data: rgba, width, height }, quality).data);
}

export class RosCamera implements Camera {
  readonly name: string;
  readonly rateHz: number;
  readonly calibration?: CameraCalibration;
  private latest: CameraFrame | undefined;
  private readonly clock = new CaptureClock();
  private stamped = true;
  private readonly waiters = new FrameWaiters();

  constructor(private readonly options: RosCameraOptions, private readonly link: RosLink, private readonly agentClock: { nowNs(): bigint }) {
    this.name = options.name;
    this.rateHz = options.rateHz;
    this.calibration = options.calibration;
    const raw = isRawImageType(options.type);
    // queue_length 1: only the newest frame matters, and a backlog of images would delay the joint states on the same socket.
    link.subscribe(options.topic, options.type, (msg) => this.onMessage(msg, raw), { throttleRateMs: 0, queueLength: 1 });
  }

  async capture(): Promise<CameraFrame> {
    if (!this.latest) await this.waiters.wait(this.options.firstFrameTimeoutMs ?? 5000);
    if (this.link.state !== "connected") throw new RosBusError(this.link.state === "closed" ? "closed" : "disconnected", `camera ${this.name}: cannot read ${this.options.topic}: ${this.link.describeOutage()}`);
    const frame = this.latest;
    if (!frame) throw new RosBusError("stale", `camera ${this.name}: nothing received on ${this.options.topic} (${this.options.type}) yet; is the camera driver publishing? (ros2 topic hz ${this.options.topic})`);
    const ageMs = Number(this.agentClock.nowNs() - frame.receivedNs!) / 1e6;
    if (ageMs > (this.options.maxFrameAgeMs ?? 1000)) throw new RosBusError("stale", `camera ${this.name}: the newest frame on ${this.options.topic} is ${Math.round(ageMs)} ms old (limit ${this.options.maxFrameAgeMs ?? 1000} ms)`);
    return frame;
  }

  timestampClock(): CameraClockInfo | undefined {
    if (!this.latest) return undefined;
    if (!this.stamped) return { kind: "arrival", description: `stamped on arrival: messages on ${this.options.topic} carry no header stamp` };
    const info = this.clock.info();
    return info && { ...info, description: `the ROS header stamp of ${this.options.topic}, ${info.description.replace(/^the device's own capture timestamps?, /, "")}` };
  }

  private onMessage(msg: unknown, raw: boolean): void {
    const receivedNs = this.agentClock.nowNs();
    const parsed = raw ? parseImage(msg) : parseCompressedImage(msg);
    if (!parsed.ok) {
      this.link.malformed(`${this.options.topic}: ${parsed.reason}`);
      return;
    }
    const image = parsed.value;
    this.stamped = image.stampNs !== null;
    const tNs = image.stampNs === null ? receivedNs : this.clock.map(image.stampNs, receivedNs);
    if (image.jpeg) {
      this.latest = { tNs, receivedNs, ...jpegSize(image.jpeg), jpeg: image.jpeg };
    } else {
      const quality = this.options.jpegQuality ?? JPEG_QUALITY;
      let bytes: Uint8Array | undefined;
      this.latest = {
        tNs, receivedNs, width: image.raw!.width, height: image.raw!.height,
        get jpeg() {
          return (bytes ??= toJpeg(image, quality));
        },
      };
    }
    this.waiters.wakeAll();
  }

}
