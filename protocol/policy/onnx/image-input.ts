/**
 * A camera frame as an `observation.images.<camera>` tensor: RGB, channels first, float32 in
 * [0, 1] (LeRobot's image convention), stretched to the model's H x W with a bilinear kernel (no
 * crop, no letterbox).
 *
 * The JPEG is the source when there is one: it is what the episode records, so replaying a
 * recording feeds the model the same pixels. Raw `rgb` is used for frames without a JPEG.
 */
import { loadSharp } from "../../image/load-sharp.js";
import type { PolicyCameraFrame } from "./policy-observation.js";

export interface ImageTensorData {
  /** Length 3 * height * width: the R plane, then G, then B. */
  data: Float32Array;
  height: number;
  width: number;
}

/** HWC uint8 pixels to CHW float32 in [0, 1]. */
function toChw(rgb: Uint8Array, height: number, width: number): Float32Array {
  const plane = height * width;
  const out = new Float32Array(3 * plane);
  for (let i = 0, p = 0; p < plane; p++, i += 3) {
    out[p] = rgb[i] / 255;
    out[plane + p] = rgb[i + 1] / 255;
    out[2 * plane + p] = rgb[i + 2] / 255;
  }
  return out;
}

/**
 * The frame as a [3, H, W] tensor's data; `size` undefined keeps the frame's own size (a model
 * that declares H and W symbolic).
 */
export async function imageTensorData(camera: string, frame: PolicyCameraFrame, size?: { height?: number; width?: number }): Promise<ImageTensorData> {
  const height = size?.height ?? frame.height;
  const width = size?.width ?? frame.width;
  const jpeg = frame.jpeg.length > 0 ? frame.jpeg : undefined;
  const rgb = jpeg ? undefined : frame.rgb;
  if (!jpeg && !rgb) throw new Error(`camera ${camera}'s frame has neither JPEG bytes nor RGB pixels`);
  if (rgb) {
    if (rgb.length !== frame.width * frame.height * 3) throw new Error(`camera ${camera}'s frame has ${rgb.length} RGB bytes; ${frame.width}x${frame.height}x3 expected`);
    if (height === frame.height && width === frame.width) return { data: toChw(rgb, height, width), height, width };
  }
  const sharp = await loadSharp();
  const input = jpeg ? sharp(jpeg) : sharp(rgb, { raw: { width: frame.width, height: frame.height, channels: 3 } });
  const { data, info } = await input
    .resize({ width, height, fit: "fill", kernel: "linear" })
    .removeAlpha()
    .toColourspace("srgb")
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 3 || info.width !== width || info.height !== height) {
    throw new Error(`camera ${camera}'s frame decoded to ${info.width}x${info.height}x${info.channels}; ${width}x${height}x3 expected`);
  }
  return { data: toChw(data, height, width), height, width };
}
