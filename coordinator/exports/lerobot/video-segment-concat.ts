/**
 * Builds one video file from its episodes' segments without re-encoding: ffmpeg's concat demuxer
 * with `-c copy`, packets copied as they are. Every segment comes from the same encoder settings
 * and starts on an IDR frame (x264's GOPs are closed), so the copied stream decodes as one with the
 * first segment's SPS/PPS, which every segment shares. `-auto_convert 0`: left on, the demuxer
 * turns packets into Annex B and the muxer keeps an SPS/PPS copy in every keyframe (37 bytes per
 * keyframe at GOP 2, a quarter of the file for a still scene).
 *
 * The demuxer places each segment at the sum of the previous segments' durations; an MP4 states
 * its duration in milliseconds, which would put a segment of 7 frames at 30 fps 10/15360 s late.
 * So each segment's duration is given in the list, in microseconds, taken from the cumulative frame
 * count (frames / fps), so the rounding never accumulates and every frame keeps its 1/fps step.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import ffmpegInstaller from "@ffmpeg-installer/ffmpeg";

export interface Segment {
  path: string;
  frames: number;
}

/** The concat demuxer's script for `segments` at `fps` (ffmpeg's `file` / `duration` directives). */
export function concatList(segments: readonly Segment[], fps: number): string {
  let frames = 0;
  let endUs = 0;
  return segments
    .map((segment) => {
      const startUs = endUs;
      frames += segment.frames;
      endUs = Math.round((frames / fps) * 1e6);
      // Inside single quotes only a quote needs escaping: close, escaped quote, reopen.
      return `file '${segment.path.replace(/'/g, "'\\''")}'\nduration ${endUs - startUs}us\n`;
    })
    .join("");
}

/** Writes `out` (MP4, moov first) from `segments` in order; `listPath` is where the script goes. */
export async function concatSegments(segments: readonly Segment[], fps: number, listPath: string, out: string): Promise<void> {
  writeFileSync(listPath, concatList(segments, fps));
  const args = [
    "-hide_banner", "-loglevel", "error", "-y",
    "-f", "concat", "-safe", "0", "-auto_convert", "0", "-i", listPath,
    "-map", "0:v", "-c", "copy", "-movflags", "+faststart", "-f", "mp4", out,
  ];
  const child = spawn(ffmpegInstaller.path, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderrTail = "";
  child.stderr.on("data", (chunk: Buffer) => (stderrTail = (stderrTail + chunk.toString()).slice(-2000)));
  const code = await new Promise<number | null>((resolve) => {
    child.on("error", (error) => {
      stderrTail += String(error);
      resolve(-1);
    });
    child.on("close", resolve);
  });
  if (code !== 0) throw new Error(`ffmpeg exited with ${code} while joining ${segments.length} segment(s) into ${out}: ${stderrTail.trim() || "no output"}`);
}
