/**
 * One openpi request from what the policy sees: each mapped camera's frame resized to the map's
 * size as uint8 (height x width x 3, or 3 x height x width), the joint positions as float32 [dof],
 * the gripper opening as float32 [1] and the instruction as a string, each at its key path.
 *
 * Resizing follows openpi-client's `image_tools.resize_with_pad` ("pad": scale by the larger ratio,
 * floor the sides, centre on black, offsets floored) or fills the size ("stretch"), with sharp's
 * bilinear kernel. A frame's RGB pixels are used when the frame already holds them; otherwise its
 * JPEG is decoded (libjpeg shrinks on load). Cost at 640x480 -> 224x224: docs/policies-openpi.md.
 */
import { loadSharp } from "../../image/load-sharp.js";
import type { PolicyCameraFrame, PolicyObservation } from "../policy-observation.js";
import { NdArray } from "./msgpack-numpy.js";
import type { ResolvedImage, ResolvedObservationMap } from "./observation-map.js";

/**
 * The frame's RGB pixels if it already holds them. A lazy `rgb` getter (the simulated cameras')
 * would render the frame again to answer, which costs more than decoding the JPEG.
 */
function heldRgb(frame: PolicyCameraFrame): Uint8Array | undefined {
  const rgb = Object.getOwnPropertyDescriptor(frame, "rgb")?.value as unknown;
  return rgb instanceof Uint8Array && rgb.length === frame.width * frame.height * 3 ? rgb : undefined;
}

/** The scaled size and offsets of `resize_with_pad` for a source of `width` x `height`. */
function padGeometry(width: number, height: number, target: ResolvedImage): { width: number; height: number; left: number; top: number } {
  const ratio = Math.max(width / target.width, height / target.height);
  const scaledWidth = Math.max(1, Math.floor(width / ratio));
  const scaledHeight = Math.max(1, Math.floor(height / ratio));
  return {
    width: scaledWidth, height: scaledHeight,
    left: Math.max(0, Math.floor((target.width - scaledWidth) / 2)),
    top: Math.max(0, Math.floor((target.height - scaledHeight) / 2)),
  };
}

/** The frame as uint8 pixels of the target's size and layout. */
export async function imageArray(frame: PolicyCameraFrame, target: ResolvedImage): Promise<NdArray> {
  const rgb = heldRgb(frame);
  const sharp = await loadSharp();
  const source = rgb ? sharp(rgb, { raw: { width: frame.width, height: frame.height, channels: 3 } }) : sharp(frame.jpeg);
  const sameSize = frame.width === target.width && frame.height === target.height;
  const fit = target.resize === "pad" && !sameSize ? padGeometry(frame.width, frame.height, target) : { width: target.width, height: target.height, left: 0, top: 0 };
  const resized = sameSize ? source : source.resize(fit.width, fit.height, { fit: "fill", kernel: "linear" });
  const { data, info } = await resized.toColourspace("srgb").removeAlpha().raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 3 || info.width !== fit.width || info.height !== fit.height) {
    throw new Error(`resizing a ${frame.width}x${frame.height} frame gave ${info.width}x${info.height}x${info.channels}, not ${fit.width}x${fit.height}x3`);
  }
  const { width, height } = target;
  const out = new Uint8Array(width * height * 3);
  if (target.layout === "hwc") {
    for (let row = 0; row < fit.height; row++) {
      out.set(data.subarray(row * fit.width * 3, (row + 1) * fit.width * 3), ((row + fit.top) * width + fit.left) * 3);
    }
    return NdArray.uint8([height, width, 3], out);
  }
  const plane = width * height;
  for (let row = 0; row < fit.height; row++) {
    for (let column = 0; column < fit.width; column++) {
      const from = (row * fit.width + column) * 3;
      const to = (row + fit.top) * width + column + fit.left;
      out[to] = data[from];
      out[plane + to] = data[from + 1];
      out[2 * plane + to] = data[from + 2];
    }
  }
  return NdArray.uint8([3, height, width], out);
}

function setPath(request: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = request;
  for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
  node[path[path.length - 1]] = value;
}

/**
 * The request map for one inference. Throws when the observation lacks something the map sends
 * (a camera's frame, the joint positions, the gripper opening); the prompt is left out when the
 * episode has no instruction.
 */
export async function buildOpenpiObservation(observation: PolicyObservation, map: ResolvedObservationMap): Promise<Record<string, unknown>> {
  const request: Record<string, unknown> = {};
  const missing = map.images.find((image) => !observation.cameras[image.camera]);
  if (missing) throw new Error(`camera ${JSON.stringify(missing.camera)} has no frame in this observation (it has: ${Object.keys(observation.cameras).join(", ") || "none"})`);
  const images = await Promise.all(map.images.map((image) => imageArray(observation.cameras[image.camera], image)));
  map.images.forEach((image, i) => setPath(request, image.path, images[i]));
  if (map.state) {
    const joints = observation.jointPositionsRad;
    if (!joints) throw new Error("this observation has no joint positions to send as the state");
    if (joints.length !== map.state.length) throw new Error(`the state has ${map.state.length} joint positions; this observation has ${joints.length}`);
    setPath(request, map.state.path, NdArray.float32([joints.length], joints));
  }
  if (map.gripper) {
    if (observation.gripperOpening === undefined) throw new Error("this observation has no gripper opening to send");
    setPath(request, map.gripper.path, NdArray.float32([1], [observation.gripperOpening]));
  }
  if (map.prompt && observation.instruction !== undefined) setPath(request, map.prompt.path, observation.instruction);
  return request;
}
