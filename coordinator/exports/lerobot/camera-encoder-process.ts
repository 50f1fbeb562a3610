/**
 * One ffmpeg process (the binary of @ffmpeg-installer/ffmpeg) writing one episode's segment of one
 * camera's video: JPEG frames piped in as they are (`jpeg_pipe`, decoded by ffmpeg's mjpeg decoder,
 * far faster than decoding them in JavaScript), H.264 in MP4 out at a constant `fps` with frame k at
 * pts k/fps, and a downsampled RGB24 copy of every frame on stdout for the image statistics
 * (image-stats-tap.ts). The segment starts on an IDR frame, and its size is final once ffmpeg
 * exits; the dataset's files are segments joined without re-encoding (video-segment-concat.ts).
 */
import { EPISODE_VIDEO_ENCODING, episodeVideoGop } from "../../../protocol/episode-video.js";
import { FfmpegTapProcess } from "./ffmpeg-tap-process.js";
import { downsampleFactor } from "./frame-sampling.js";
import { ImageStatsTap } from "./image-stats-tap.js";

/** How a camera's videos are encoded; info.json records it as LeRobot's `VideoEncoderConfig` fields. */
export interface VideoEncoding {
  encoder: string;
  /** The stream's codec as PyAV's `codec.canonical_name` reports it (`video.codec`). */
  codecName: string;
  pixFmt: string;
  preset: string;
  gop: number;
  crf: number;
}

/**
 * LeRobot's own settings, for recordings whose cell made no video the export can copy. A GOP of 2 is
 * LeRobot's default (`g=2`): training decodes frames at random, and a short GOP keeps each seek
 * cheap. `superfast` measured faster than `ultrafast` at this GOP (2 cores, 320x240).
 */
export const VIDEO_ENCODING: VideoEncoding = {
  encoder: "libx264",
  codecName: "h264",
  pixFmt: "yuv420p",
  preset: "superfast",
  gop: 2,
  crf: 23,
};

/**
 * The cell's own settings (protocol/episode-video.ts) at `fps`: what a camera's videos are made with
 * when the export copies the cell's videos, so an episode it has to encode joins them in one file.
 */
export function cellVideoEncoding(fps: number): VideoEncoding {
  const { encoder, codecName, pixFmt, preset, crf } = EPISODE_VIDEO_ENCODING;
  return { encoder, codecName, pixFmt, preset, crf, gop: episodeVideoGop(fps) };
}

export interface CameraGeometry {
  /** Size of the camera's frames (the first JPEG); other sizes are scaled to it. */
  widthPx: number;
  heightPx: number;
}

/** yuv420p needs even sides; odd ones get one black row or column. */
export function videoSize(camera: CameraGeometry): { widthPx: number; heightPx: number } {
  return { widthPx: camera.widthPx + (camera.widthPx % 2), heightPx: camera.heightPx + (camera.heightPx % 2) };
}

export class CameraEncoderProcess {
  private constructor(private readonly process: FfmpegTapProcess, readonly tap: ImageStatsTap, readonly path: string) {}

  /** Starts ffmpeg writing the segment `path` (which it overwrites). */
  static start(path: string, camera: CameraGeometry, fps: number, encoding: VideoEncoding): CameraEncoderProcess {
    const { widthPx, heightPx } = videoSize(camera);
    const factor = downsampleFactor(camera.widthPx, camera.heightPx);
    const tapWidthPx = Math.ceil(camera.widthPx / factor);
    const tapHeightPx = Math.ceil(camera.heightPx / factor);
    const pad = widthPx !== camera.widthPx || heightPx !== camera.heightPx ? `pad=${widthPx}:${heightPx},` : "";
    const tapScale = factor > 1 ? `scale=${tapWidthPx}:${tapHeightPx}:flags=neighbor,` : "";
    const graph =
      `[0:v]scale=${camera.widthPx}:${camera.heightPx},split=2[enc][tap];` +
      `[enc]${pad}format=${encoding.pixFmt}[video];[tap]${tapScale}format=rgb24[stats]`;
    const args = [
      "-hide_banner", "-loglevel", "error", "-y",
      "-f", "jpeg_pipe", "-framerate", String(fps), "-i", "pipe:0",
      // Passthrough: one output frame per input frame, never duplicated or dropped.
      "-vsync", "0",
      "-filter_complex", graph,
      "-map", "[video]", "-c:v", encoding.encoder, "-preset", encoding.preset,
      "-g", String(encoding.gop), "-crf", String(encoding.crf), "-pix_fmt", encoding.pixFmt,
      // A segment is read once, by the concatenation, so no +faststart pass here: the joined file gets it.
      "-f", "mp4", path,
      "-map", "[stats]", "-f", "rawvideo", "pipe:1",
    ];
    const tap = new ImageStatsTap(tapWidthPx * tapHeightPx * 3);
    const process = new FfmpegTapProcess(args, tap, {
      doing: (frames) => `while encoding ${path} (${frames} frames piped)`,
      stoppedMessage: "ffmpeg stopped before the last frame",
    });
    return new CameraEncoderProcess(process, tap, path);
  }

  get frames(): number {
    return this.process.frames;
  }

  /** Pipes one JPEG frame. */
  write(jpeg: Uint8Array): Promise<void> {
    return this.process.write(jpeg);
  }

  /** Closes the pipe and waits for ffmpeg to finish the file; throws if it failed or lost a frame. */
  finish(): Promise<void> {
    return this.process.close();
  }

  /** Kills ffmpeg (the file it leaves is incomplete). */
  abort(): Promise<void> {
    return this.process.abort();
  }
}
