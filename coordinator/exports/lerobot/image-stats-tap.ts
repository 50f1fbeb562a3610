/**
 * Image statistics from the frames ffmpeg decodes anyway: the camera encoder sends a second,
 * downsampled RGB24 copy of every frame to stdout, and this tap counts the pixel levels of the
 * frames LeRobot would sample (frame-sampling.ts) per episode, without decoding a JPEG in
 * JavaScript. ffmpeg emits frames late (decoder and filter delay), so an episode's statistics are
 * ready some frames after the writer moved on; `stats` resolves then.
 */
import { channelStatsFromCounts, type FeatureStats } from "./feature-stats.js";

const CHANNELS = 3;

interface Segment {
  sampled: Set<number>;
  counts: Float64Array;
  /** Frames piped for the episode; undefined while the episode is still being written. */
  total: number | undefined;
  received: number;
  sampledReceived: number;
  resolve: (stats: FeatureStats) => void;
}

/**
 * Adds the levels of `chunk[from..to)` to `counts` (256 per channel), `chunk[from]` being of channel
 * `channel`: byte by byte up to the first whole pixel, then a pixel (three bytes) at a time instead of
 * cycling the channel per byte (that loop was a tenth of a LeRobot export's coordinator CPU, profiled;
 * 200 downsampled frames count in 11-16 ms instead of 22 ms, best of 15), then the bytes of a pixel
 * the chunk cuts.
 *
 * The bytes around a cut pixel are counted by `countBytes`, not by loops of this function: ffmpeg's
 * pipe cuts pixels at random, and a loop here that had not run before V8 optimized the function
 * threw the optimized code away when it first ran ("insufficient type feedback"; `--trace-deopt`
 * showed 276 such deoptimizations in a 30-episode export, each followed by a recompilation: the
 * optimizing compiler was still a tenth of the export's CPU in its second attempt).
 */
function countLevels(counts: Float64Array, chunk: Uint8Array, from: number, to: number, channel: number): void {
  const start = Math.min(from + ((CHANNELS - channel) % CHANNELS), to);
  countBytes(counts, chunk, from, start, channel);
  const wholePixelsEnd = start + Math.floor((to - start) / CHANNELS) * CHANNELS;
  for (let i = start; i < wholePixelsEnd; i += CHANNELS) {
    counts[chunk[i]]++;
    counts[256 + chunk[i + 1]]++;
    counts[512 + chunk[i + 2]]++;
  }
  countBytes(counts, chunk, wholePixelsEnd, to, 0);
}

/**
 * Adds the levels of the bytes of a cut pixel (none to two), `chunk[from]` being of channel
 * `channel`. Called for every chunk, with nothing to count in most, and without a branch of its own,
 * so that V8 has seen all of it before it optimizes the caller.
 */
function countBytes(counts: Float64Array, chunk: Uint8Array, from: number, to: number, channel: number): void {
  for (let i = from; i < to; i++) counts[((channel + i - from) % CHANNELS) * 256 + chunk[i]]++;
}

export class ImageStatsTap {
  private readonly segments: Segment[] = [];
  private positionInFrame = 0;
  private framesSeen = 0;

  constructor(private readonly frameBytes: number) {}

  get frames(): number {
    return this.framesSeen;
  }

  /**
   * Starts the next episode's frames; `sampledFrames` are the indices within the episode whose
   * pixels count. Returns the episode's statistics once all its frames came through.
   */
  beginEpisode(sampledFrames: readonly number[]): Promise<FeatureStats> {
    return new Promise((resolve) => {
      this.segments.push({ sampled: new Set(sampledFrames), counts: new Float64Array(CHANNELS * 256), total: undefined, received: 0, sampledReceived: 0, resolve });
    });
  }

  /** The episode begun last had `frames` frames; nothing more belongs to it. */
  endEpisode(frames: number): void {
    const segment = this.segments.at(-1);
    if (!segment || segment.total !== undefined) throw new Error("ImageStatsTap.endEpisode without an open episode");
    segment.total = frames;
    this.settle();
  }

  /** Bytes from ffmpeg's stdout, in order. */
  push(chunk: Uint8Array): void {
    let offset = 0;
    while (offset < chunk.length) {
      const segment = this.segments[0];
      if (!segment || (segment.total !== undefined && segment.received >= segment.total)) {
        throw new Error(`ffmpeg emitted more frames than were piped (${this.framesSeen + 1} and counting)`);
      }
      const take = Math.min(this.frameBytes - this.positionInFrame, chunk.length - offset);
      if (segment.sampled.has(segment.received)) countLevels(segment.counts, chunk, offset, offset + take, this.positionInFrame % CHANNELS);
      this.positionInFrame += take;
      offset += take;
      if (this.positionInFrame === this.frameBytes) {
        this.positionInFrame = 0;
        this.framesSeen++;
        if (segment.sampled.has(segment.received)) segment.sampledReceived++;
        segment.received++;
        this.settle();
      }
    }
  }

  /** Throws unless every piped frame came back whole (call after ffmpeg exited). */
  assertComplete(framesPiped: number): void {
    if (this.positionInFrame !== 0 || this.framesSeen !== framesPiped || this.segments.length > 0) {
      throw new Error(`ffmpeg returned ${this.framesSeen} decoded frames (+${this.positionInFrame} bytes) for ${framesPiped} frames piped; the video would not match the data rows`);
    }
  }

  private settle(): void {
    while (this.segments.length > 0) {
      const segment = this.segments[0];
      if (segment.total === undefined || segment.received < segment.total) return;
      this.segments.shift();
      segment.resolve(channelStatsFromCounts(segment.counts, CHANNELS, segment.sampledReceived));
    }
  }
}
