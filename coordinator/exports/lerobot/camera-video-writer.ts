/**
 * One camera's video files, `videos/<video_key>/chunk-XXX/file-YYY.mp4`: episodes concatenated in
 * a file until it would reach `videoFileSizeMb`, then the next file, as LeRobot's
 * `_save_episode_video` rolls over. An episode's place is its file and its `from_timestamp` /
 * `to_timestamp`, the frame offsets in that file divided by fps.
 *
 * An episode's segment is the cell's own video of the camera when it has one frame per control step
 * (episode-video-source.ts): copied as it is, never decoded, its image statistics from a bounded
 * sample of its JPEGs (sample-decoder-process.ts). Otherwise, as LeRobot does, the episode is
 * encoded on its own (one ffmpeg per episode, a segment under `.segments/` of the dataset root). A
 * camera whose first episode's video can be copied encodes with the cell's settings, so encoded and
 * copied episodes join in one file; any other camera with LeRobot's. Either way the segment's exact
 * size is known before it is placed (video-file-plan.ts); a file is its segments joined without
 * re-encoding once the next episode rolls over or the export ends (video-segment-concat.ts). The
 * layout depends on the segments alone, not on how far an encoder got. The next episode is encoded
 * while the previous one's ffmpeg finishes, at most one behind.
 */
import { mkdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { FeatureStats } from "./feature-stats.js";
import { sampleIndices } from "./frame-sampling.js";
import { CameraEncoderProcess, type CameraGeometry, type VideoEncoding } from "./camera-encoder-process.js";
import type { CopyCandidate, EncodeReason } from "./episode-video-source.js";
import { readMp4VideoTrack } from "./mp4-video-track.js";
import { SampleDecoderProcess, remuxSampleIndices } from "./sample-decoder-process.js";
import { videoFilePath, type FileSlot } from "./lerobot-layout.js";
import { VideoFilePlan, type SegmentSize, type VideoFileLimits } from "./video-file-plan.js";
import { concatSegments, type Segment } from "./video-segment-concat.js";

export type VideoLimits = VideoFileLimits;

/** Where the segments are encoded, under the dataset root; removed once the files are joined. */
export const SEGMENTS_DIR = ".segments";

/** Where an episode's frames are in this camera's videos. */
export interface VideoPlacement {
  slot: FileSlot;
  fromTimestampS: number;
  toTimestampS: number;
}

export interface EpisodeVideo {
  /** Settles once the episode's segment is encoded and placed. */
  placement: Promise<VideoPlacement>;
  /** The episode's image statistics; settles once ffmpeg has returned all its frames. */
  stats: Promise<FeatureStats>;
  /** True when the cell's video was copied, false when the episode was encoded. */
  copied: boolean;
}

type OpenEpisode =
  | { kind: "encode"; encoder: CameraEncoderProcess; path: string; stats: Promise<FeatureStats> }
  | { kind: "copy"; source: CopyCandidate; sampled: Set<number>; stats: Promise<FeatureStats>; step: number; piped: number; broken: string | undefined };

const ignore = () => undefined;

export class CameraVideoWriter {
  private readonly plan: VideoFilePlan;
  private readonly segmentDir: string;
  private open: OpenEpisode | undefined;
  private black: Uint8Array | undefined;
  private sampleDecoder: SampleDecoderProcess | undefined;
  private episodes = 0;
  /** The placements of the last two episodes, in order: the next waits for the older one. */
  private placed: [Promise<unknown>, Promise<unknown>] = [Promise.resolve(), Promise.resolve()];
  private readonly running = new Set<CameraEncoderProcess>();
  /** The open file's slot and segments. */
  private file: { slot: FileSlot; segments: Segment[] } | undefined;
  private readonly joins: Array<Promise<void>> = [];
  /** Paths (relative to the dataset root) of the files written, in order. */
  readonly files: string[] = [];
  /** Segments that are the cell's videos, copied: read, never removed. */
  private readonly copied = new Set<string>();

  /**
   * @param blackJpeg makes the frame used at steps before the camera's first frame (called once, when first needed)
   * @param encoding how episodes that are not copied are encoded
   * @param notCopied why this camera's episodes are all encoded (its first episode's video could not
   *   be copied); undefined when they may be copied from the cell's videos (`encoding` is then the cell's)
   */
  constructor(
    private readonly root: string,
    readonly videoKey: string,
    readonly geometry: CameraGeometry,
    private readonly fps: number,
    limits: VideoLimits,
    private readonly blackJpeg: () => Uint8Array,
    readonly encoding: VideoEncoding,
    readonly notCopied: { reason: EncodeReason; detail: string } | undefined,
  ) {
    this.plan = new VideoFilePlan(limits);
    this.segmentDir = join(root, SEGMENTS_DIR, videoKey);
  }

  /** Whether episodes may be copied from the cell's videos. */
  get copies(): boolean {
    return this.notCopied === undefined;
  }

  /**
   * Opens an episode of `steps` frames: a copy of `copy` (the cell's video, checked to have one
   * frame per step) or, without one, an encoded segment.
   */
  async beginEpisode(steps: number, copy?: CopyCandidate): Promise<void> {
    if (this.open) throw new Error(`${this.videoKey}: beginEpisode while an episode is open`);
    if (copy) {
      const sampled = remuxSampleIndices(steps);
      this.sampleDecoder ??= new SampleDecoderProcess(this.geometry, this.videoKey);
      const stats = this.sampleDecoder.beginEpisode(sampled.length);
      stats.catch(ignore); // a decoder failure surfaces through close()
      this.open = { kind: "copy", source: copy, sampled: new Set(sampled), stats, step: 0, piped: 0, broken: undefined };
      return;
    }
    await this.beginEncoding(steps);
  }

  /**
   * The camera's frame at the next step; `undefined` (no frame yet) appends a black frame.
   * `fresh`: the camera captured it at this step (a copied video has a frame for fresh steps only).
   */
  async addFrame(jpeg: Uint8Array | undefined, fresh = true): Promise<void> {
    const open = this.open;
    if (!open) throw new Error(`${this.videoKey}: addFrame outside an episode`);
    if (open.kind === "encode") {
      // A copy: the frame may be a view into the export's reused decompression buffers, and an encoder
      // takes its episode's frames while the next episode is read (a sampled frame is not copied:
      // `released()` waits for the sample decoder's pipe instead, which takes 10 frames an episode).
      await open.encoder.write(jpeg ? Uint8Array.prototype.slice.call(jpeg) : (this.black ??= this.blackJpeg()));
      return;
    }
    const step = open.step++;
    if (open.broken) return;
    if (!fresh || !jpeg) {
      open.broken = `step ${step} has no frame of its own`;
      return;
    }
    if (open.sampled.has(step)) {
      await this.sampleDecoder!.write(jpeg);
      open.piped++;
    }
  }

  /** Why the open episode's copy cannot stand for it (its steps and the video's frames differ); undefined when it can. */
  get copyRefused(): string | undefined {
    const open = this.open;
    if (open?.kind !== "copy") return undefined;
    return open.broken ?? (open.step !== open.source.frames ? `${open.step} steps, ${open.source.frames} video frames` : undefined);
  }

  /** Gives up the open episode's copy: the caller sends every step's frame again, to be encoded. */
  async encodeInstead(steps: number): Promise<void> {
    const open = this.open;
    if (open?.kind !== "copy") throw new Error(`${this.videoKey}: encodeInstead without a copied episode open`);
    this.sampleDecoder!.endEpisode(open.piped);
    this.open = undefined;
    await this.beginEncoding(steps);
  }

  private async beginEncoding(steps: number): Promise<void> {
    // Bounds the ffmpeg processes: the episode before the previous one is placed.
    await this.placed[0];
    mkdirSync(this.segmentDir, { recursive: true });
    const path = join(this.segmentDir, `episode-${String(this.episodes).padStart(6, "0")}.mp4`);
    const encoder = CameraEncoderProcess.start(path, this.geometry, this.fps, this.encoding);
    this.running.add(encoder);
    this.open = { kind: "encode", encoder, path, stats: encoder.tap.beginEpisode(sampleIndices(steps)) };
  }

  /** Closes the episode: its segment finishes and is placed after the episodes before it. */
  endEpisode(): EpisodeVideo {
    const open = this.open;
    if (!open) throw new Error(`${this.videoKey}: endEpisode outside an episode`);
    if (open.kind === "copy" && this.copyRefused) throw new Error(`${this.videoKey}: endEpisode on a copy that cannot stand for the episode (${this.copyRefused}); call encodeInstead`);
    this.open = undefined;
    this.episodes++;
    const previous = this.placed[1];
    let placement: Promise<VideoPlacement>;
    let stats: Promise<FeatureStats>;
    if (open.kind === "copy") {
      this.sampleDecoder!.endEpisode(open.piped);
      const { path, frames, decoderConfig } = open.source;
      placement = previous.then(() => this.place({ path, frames, owned: false }, { bytes: statSync(path).size, frames, decoderConfig }));
      stats = open.stats;
    } else {
      const { encoder, path } = open;
      const frames = encoder.frames;
      encoder.tap.endEpisode(frames);
      const finished = encoder.finish().finally(() => this.running.delete(encoder));
      placement = Promise.all([finished, previous]).then(async () => {
        const decoderConfig = this.copies ? (await readMp4VideoTrack(path)).decoderConfig : undefined;
        return this.place({ path, frames, owned: true }, { bytes: statSync(path).size, frames, decoderConfig });
      });
      stats = open.stats;
    }
    placement.catch(ignore); // awaited by the caller or by close(); an earlier failure is reported there
    this.placed = [previous, placement];
    return { placement, stats, copied: open.kind === "copy" };
  }

  /**
   * Settles once no ffmpeg holds a buffer given to `addFrame` (the sample decoder's pipe has taken every
   * sampled frame; encoders are given copies), so those buffers may be reused: write-lerobot.ts then
   * recycles its chunk decompressor's.
   */
  async released(): Promise<void> {
    await this.sampleDecoder?.released();
  }

  /** Waits for every episode to be placed and joins the last file. */
  async close(): Promise<void> {
    if (this.open) throw new Error(`${this.videoKey}: close while an episode is open`);
    await this.placed[1];
    this.joinFile();
    await Promise.all(this.joins);
    await this.sampleDecoder?.close();
    rmSync(this.segmentDir, { recursive: true, force: true });
  }

  /** Stops every ffmpeg without finishing the files (the segments stay for the caller to remove). */
  async abort(): Promise<void> {
    const encoders = [...this.running];
    this.open = undefined;
    await Promise.all([...encoders.map((encoder) => encoder.abort()), this.sampleDecoder?.abort()]);
    await Promise.allSettled([...this.placed, ...this.joins]);
  }

  private place(segment: Segment & { owned: boolean }, size: SegmentSize): VideoPlacement {
    const placed = this.plan.place(size);
    if (placed.startsFile) {
      this.joinFile();
      this.file = { slot: placed.slot, segments: [] };
      this.files.push(videoFilePath(this.videoKey, placed.slot));
    }
    this.file!.segments.push(segment);
    if (!segment.owned) this.copied.add(segment.path);
    return { slot: placed.slot, fromTimestampS: placed.fromFrame / this.fps, toTimestampS: placed.toFrame / this.fps };
  }

  /** Joins the open file's segments into it, in the background; close() awaits it. */
  private joinFile(): void {
    const file = this.file;
    this.file = undefined;
    if (!file) return;
    const out = join(this.root, videoFilePath(this.videoKey, file.slot));
    mkdirSync(dirname(out), { recursive: true });
    mkdirSync(this.segmentDir, { recursive: true });
    const listPath = join(this.segmentDir, `file-${file.slot.chunkIndex}-${file.slot.fileIndex}.txt`);
    const joined = concatSegments(file.segments, this.fps, listPath, out).then(() => {
      // The cell's videos are the artifact store's files: never removed here.
      for (const segment of [...file.segments.map((s) => s.path).filter((path) => !this.copied.has(path)), listPath]) rmSync(segment, { force: true });
    });
    joined.catch(ignore); // awaited by close()
    this.joins.push(joined);
  }
}

