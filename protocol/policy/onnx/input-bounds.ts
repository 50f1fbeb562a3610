/**
 * How large a model's declared inputs may be, from what the robot and its cameras produce: the
 * contract check (contract-check.ts) refuses a model past these at submission on the coordinator
 * and again on the cell before any input buffer is allocated, so a model declaring a 20000x20000
 * image or a 40,000,000-value noise input never reaches a run.
 */

/** The size of the frames a camera gives. */
export interface CameraSize {
  width: number;
  height: number;
}

/** An image input may stretch a camera's frame to at most this many times its width and height. */
export const MAX_IMAGE_UPSCALE = 2;
/** Largest image side when the camera's own size is not known (the cell checks before its cameras start). */
export const MAX_IMAGE_SIDE_PX = 2048;
/** Largest noise input, in values: a chunk of action rows is tens to hundreds of rows of a few dozen values. */
export const MAX_NOISE_VALUES = 65_536;
/** Largest action chunk a model may declare, in rows. */
export const MAX_CHUNK_ROWS = 4096;

/** The cameras' nominal frame sizes on the fleet (wrist cameras 320x240, the others 640x480). */
export function nominalCameraSize(camera: string): CameraSize {
  return camera === "wrist" ? { width: 320, height: 240 } : { width: 640, height: 480 };
}

/** Largest height and width an image input fed from a camera of `size` may declare. */
export function maxImageInput(size: CameraSize | undefined): CameraSize {
  return size ? { width: size.width * MAX_IMAGE_UPSCALE, height: size.height * MAX_IMAGE_UPSCALE } : { width: MAX_IMAGE_SIDE_PX, height: MAX_IMAGE_SIDE_PX };
}
