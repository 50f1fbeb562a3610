/**
 * The ffmpeg input arguments for a camera, the only part of `FfmpegCamera` that differs between a
 * V4L2/UVC device and ffmpeg's synthetic test source. Everything after `-i` (timestamps, JPEG
 * encoding, the pipe) is the same code path for both, so tests on `testsrc2` exercise the driver a
 * real camera runs.
 */

/** Pixel formats a V4L2 camera commonly offers, as ffmpeg names them (`-input_format`). */
export const V4L2_INPUT_FORMATS = ["mjpeg", "yuyv422", "nv12", "yuv420p", "rgb24", "bgr24", "gray"] as const;
export type V4l2InputFormat = (typeof V4L2_INPUT_FORMATS)[number];

export interface V4l2Input {
  /** e.g. "/dev/video0" or "/dev/v4l/by-id/usb-...-video-index0". */
  device: string;
  /** The format asked of the camera; "mjpeg" keeps USB bandwidth low (default in the config). */
  inputFormat: V4l2InputFormat;
  width: number;
  height: number;
  /** The rate asked of the camera, frames per second. */
  frameRateHz: number;
}

/**
 * `-f v4l2 -input_format F -video_size WxH -framerate R -i DEVICE`. `-ts default` keeps the kernel's
 * buffer timestamps, which UVC drivers take from CLOCK_MONOTONIC when the frame's first bytes arrive:
 * the same clock as the agent's (`process.hrtime`).
 */
export function v4l2InputArgs(input: V4l2Input): string[] {
  return [
    "-f", "v4l2", "-ts", "default",
    "-input_format", input.inputFormat,
    "-video_size", `${input.width}x${input.height}`,
    "-framerate", String(input.frameRateHz),
    "-i", input.device,
  ];
}

/**
 * ffmpeg's synthetic camera (`testsrc2`, a moving test pattern with a frame counter), paced to real
 * time with `-re`. For tests and for trying the agent on a PC without a camera.
 */
export function syntheticInputArgs(input: { width: number; height: number; frameRateHz: number }): string[] {
  return ["-re", "-f", "lavfi", "-i", `testsrc2=size=${input.width}x${input.height}:rate=${input.frameRateHz}`];
}
