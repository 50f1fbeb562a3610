/**
 * The episode videos a cell uploads, as a contract between the agent (which encodes them) and the
 * coordinator (which serves them and remuxes them into LeRobot datasets without re-encoding): the
 * artifact kinds that name each camera's video, and the H.264 settings every such video is made
 * with. An exporter that has to encode an episode the cell's video cannot stand for uses the same
 * settings, so its segment joins the cell's in one file.
 */

/** The artifact kind of the primary camera's video ("top", else the cell's first camera). */
export const PRIMARY_VIDEO_KIND = "video";
const CAMERA_VIDEO_PREFIX = "video:";

/** The artifact kind of a non-primary camera's video. */
export function cameraVideoKind(camera: string): string {
  return `${CAMERA_VIDEO_PREFIX}${camera}`;
}

/** The camera a `video:<camera>` kind names; undefined for any other kind (`video` included). */
export function cameraOfVideoKind(kind: string): string | undefined {
  return kind.startsWith(CAMERA_VIDEO_PREFIX) && kind.length > CAMERA_VIDEO_PREFIX.length ? kind.slice(CAMERA_VIDEO_PREFIX.length) : undefined;
}

/**
 * How a cell encodes an episode video (LeRobot's `VideoEncoderConfig` field names where it has one).
 * ultrafast keeps a cell's CPU for the episode (about 1.3 ms per 640x480 frame). CRF 28, not x264's
 * default 23: the frames are JPEGs whose quantisation noise changes from frame to frame, and at 23
 * x264 spends ~850 kb/s reproducing it; at 28 a simulated tabletop at 640x480 and 30 fps takes
 * ~250 kb/s and looks the same. A key frame every 2 s lets a browser seek (a LeRobot dataset made
 * from these videos decodes up to 2 s of frames for a random frame; LeRobot's own default is 2 frames).
 */
export const EPISODE_VIDEO_ENCODING = {
  encoder: "libx264",
  /** The stream's codec as PyAV's `codec.canonical_name` reports it. */
  codecName: "h264",
  pixFmt: "yuv420p",
  preset: "ultrafast",
  crf: 28,
  gopS: 2,
} as const;

/** Frames between key frames at `rateHz`. */
export function episodeVideoGop(rateHz: number): number {
  return Math.max(1, Math.round(EPISODE_VIDEO_ENCODING.gopS * rateHz));
}

/**
 * ffmpeg's output options for an episode video at `rateHz`, after the input and any filter:
 * one output frame per input frame, the swscale fast path for the JPEGs' full-range yuvj420p to
 * browser-safe yuv420p (PSNR about 50 dB against the default path, far below CRF 28's own loss),
 * one encoder thread, and the moov box first so a browser plays the file while it downloads.
 *
 * `trellis=0` is what x264's ultrafast preset itself sets, but the shipped ffmpeg's libx264 wrapper
 * turns trellis quantisation back on (the stream's x264 SEI says `trellis=1`); off, x264 costs about
 * 30% less CPU per 640 x 480 frame for 1-2% more bytes (scripts/bench/render.ts). The stream's
 * parameters (codec, profile, pix_fmt, size, GOP) are unchanged, so LeRobot exports still remux it.
 */
export function episodeVideoOutputArgs(rateHz: number): string[] {
  const { encoder, preset, crf, pixFmt } = EPISODE_VIDEO_ENCODING;
  return [
    "-vsync", "0",
    "-sws_flags", "fast_bilinear", "-threads", "1",
    "-c:v", encoder, "-preset", preset, "-x264-params", "trellis=0", "-crf", String(crf), "-g", String(episodeVideoGop(rateHz)),
    "-pix_fmt", pixFmt, "-movflags", "+faststart",
  ];
}
