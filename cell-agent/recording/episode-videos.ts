/**
 * Every camera's episode video: one VideoEncoder (one ffmpeg, one thread each way) per camera,
 * fed the camera's JPEG at each step it captured, so a video has one frame per captured frame at
 * the camera's own rate. One process per camera rather than one ffmpeg with an input pipe per
 * camera: measured on a simulated episode (215 frames, 2 cores), the top camera (640x480) costs
 * 2.3 ms of ffmpeg CPU a frame and the wrist camera (320x240) 0.7 ms in processes of their own,
 * and 2.8 ms together in one process with two outputs: 5% less, for a process whose failure would
 * take every camera's video with it.
 *
 * The primary camera's video (`top`, else the cell's first camera: the Episode's `video_url`) is
 * `<episode>.mp4` and uploaded as kind `video`, as before; every other camera's is
 * `<episode>.<camera>.mp4`, kind `video:<camera>`. Each is written as `<file>.part` and renamed
 * once its ffmpeg exits cleanly, so a crash leaves only `.mp4.part` files, which the agent removes
 * on start (recovery.ts).
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { PRIMARY_VIDEO_KIND, cameraVideoKind } from "../../protocol/episode-video.js";
import type { Camera, CameraFrame } from "../hardware/types.js";
import { VideoEncoder } from "./video-encoder.js";

/** A finished video of one camera. */
export interface EpisodeVideoFile {
  camera: string;
  /** `video` for the primary camera, `video:<camera>` for the others. */
  kind: string;
  path: string;
  frames: number;
}

/** Prefers the camera named "top", then the cameras in the cell's order. */
export function videoCameraOrder(cameras: readonly Camera[]): Camera[] {
  return [...cameras].sort((a, b) => Number(b.name === "top") - Number(a.name === "top"));
}

/** A camera name that can stand in a file name as it is; others are spelled with their code points. */
function fileNamePart(camera: string): string {
  return /^[A-Za-z0-9_-]{1,64}$/.test(camera) ? camera : [...camera].map((c) => (/[A-Za-z0-9_-]/.test(c) ? c : `~${c.codePointAt(0)!.toString(16)}`)).join("").slice(0, 100);
}

export class EpisodeVideos {
  private readonly encoders = new Map<string, { encoder: VideoEncoder; kind: string }>();
  /** The camera whose video is the episode's `video_url`, or undefined for a cell without cameras. */
  readonly primaryCamera: string | undefined;

  constructor(private readonly dir: string, private readonly episodeId: string, private readonly cameras: readonly Camera[]) {
    this.primaryCamera = videoCameraOrder(cameras)[0]?.name;
  }

  /** Appends `camera`'s frame captured this step; its ffmpeg starts on its first frame. */
  async addFrame(camera: string, frame: CameraFrame): Promise<void> {
    let entry = this.encoders.get(camera);
    if (!entry) {
      const primary = camera === this.primaryCamera;
      const path = join(this.dir, primary ? `${this.episodeId}.mp4` : `${this.episodeId}.${fileNamePart(camera)}.mp4`);
      const rateHz = this.cameras.find((c) => c.name === camera)!.rateHz;
      entry = { encoder: new VideoEncoder(path, rateHz), kind: primary ? PRIMARY_VIDEO_KIND : cameraVideoKind(camera) };
      this.encoders.set(camera, entry);
    }
    await entry.encoder.addFrame(frame);
  }

  /** Finishes every camera's video, primary first; cameras that captured nothing have none. */
  async finish(): Promise<EpisodeVideoFile[]> {
    const entries = [...this.encoders].sort(([a], [b]) => Number(b === this.primaryCamera) - Number(a === this.primaryCamera));
    const finished = await Promise.allSettled(entries.map(([, { encoder }]) => encoder.finish()));
    const failed = finished.find((f): f is PromiseRejectedResult => f.status === "rejected");
    if (failed) {
      // No video of a failed episode stays behind unannounced.
      await Promise.all(entries.map(([, { encoder }]) => rm(encoder.path, { force: true })));
      throw failed.reason;
    }
    return entries.map(([camera, { encoder, kind }]) => ({ camera, kind, path: encoder.path, frames: encoder.framesWritten }));
  }

  /** Stops every ffmpeg and removes the partial files (aborted episodes keep no video). */
  async abort(): Promise<void> {
    await Promise.all([...this.encoders.values()].map(({ encoder }) => encoder.abort().catch(() => undefined)));
  }
}
