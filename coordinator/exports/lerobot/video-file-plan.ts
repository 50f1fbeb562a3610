/**
 * Which video file each episode's segment goes into: LeRobot's `_save_episode_video` rule, an
 * episode starts a new file when the current file's size plus the episode's would reach
 * `videoFileSizeMb`, decided from exact sizes only. Each episode of a camera is encoded to its own
 * segment (camera-encoder-process.ts), whose size is known once its ffmpeg exits; a file's size is
 * the sum of its segments' sizes (the concatenated file differs from it only by the container
 * headers the concatenation merges). So the layout is a function of the segments' sizes, frame
 * counts and decoder configurations alone, never of how far a running encoder got. A segment whose
 * decoder configuration (SPS/PPS) differs from the open file's starts a new file, since a copied
 * stream decodes with one configuration.
 */
import { BYTES_PER_MB, FIRST_SLOT, nextSlot, type FileSlot } from "./lerobot-layout.js";

export interface VideoFileLimits {
  videoFileSizeMb: number;
  chunksSize: number;
}

/** One episode's encoded segment. */
export interface SegmentSize {
  bytes: number;
  frames: number;
  /**
   * The stream's decoder configuration (the MP4's avcC): packets copied into one file are decoded
   * with its first segment's, so a segment with another one starts a new file. Undefined: the
   * same as every other segment's.
   */
  decoderConfig?: string;
}

/** Where a segment went: its file, its first and end frame in that file, and whether it opened the file. */
export interface SegmentPlacement {
  slot: FileSlot;
  fromFrame: number;
  toFrame: number;
  startsFile: boolean;
}

export class VideoFilePlan {
  private slot: FileSlot = FIRST_SLOT;
  private fileBytes = 0;
  private fileFrames = 0;
  private segments = 0;
  private decoderConfig: string | undefined;

  constructor(private readonly limits: VideoFileLimits) {}

  /** Places the next segment, in episode order. */
  place(segment: SegmentSize): SegmentPlacement {
    if (!(Number.isInteger(segment.bytes) && segment.bytes > 0 && Number.isInteger(segment.frames) && segment.frames > 0)) {
      throw new Error(`a video segment needs a positive whole number of bytes and frames; got ${segment.bytes} bytes, ${segment.frames} frames`);
    }
    let startsFile = this.segments === 0;
    const otherStream = segment.decoderConfig !== this.decoderConfig;
    if (!startsFile && ((this.fileBytes + segment.bytes) / BYTES_PER_MB >= this.limits.videoFileSizeMb || otherStream)) {
      this.slot = nextSlot(this.slot, this.limits.chunksSize);
      this.fileBytes = 0;
      this.fileFrames = 0;
      startsFile = true;
    }
    const fromFrame = this.fileFrames;
    this.decoderConfig = segment.decoderConfig;
    this.fileBytes += segment.bytes;
    this.fileFrames += segment.frames;
    this.segments++;
    return { slot: this.slot, fromFrame, toFrame: this.fileFrames, startsFile };
  }
}

/** The placements of `segments` (one camera's episodes, in order): the whole layout at once. */
export function planVideoFiles(segments: readonly SegmentSize[], limits: VideoFileLimits): SegmentPlacement[] {
  const plan = new VideoFilePlan(limits);
  return segments.map((segment) => plan.place(segment));
}
