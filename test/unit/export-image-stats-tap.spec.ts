/**
 * LeRobot's image statistics from ffmpeg's downsampled frames: the same levels counted however
 * ffmpeg's pipe cuts the frames into chunks (mid-pixel, mid-frame, several frames in one chunk).
 */
import { strict as assert } from "node:assert";
import { channelStatsFromCounts } from "../../coordinator/exports/lerobot/feature-stats.js";
import { ImageStatsTap } from "../../coordinator/exports/lerobot/image-stats-tap.js";

describe("LeRobot image statistics tap", () => {
  // Three seeded 5x4 RGB frames; frames 0 and 2 are the sampled ones.
  const frameBytes = 5 * 4 * 3;
  const frames = Buffer.alloc(3 * frameBytes);
  let seed = 11;
  for (let i = 0; i < frames.length; i++) frames[i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
  const expected = () => {
    const counts = new Float64Array(3 * 256);
    for (const f of [0, 2]) for (let i = 0; i < frameBytes; i++) counts[(i % 3) * 256 + frames[f * frameBytes + i]]++;
    return channelStatsFromCounts(counts, 3, 2);
  };

  it("counts the sampled frames' levels the same for every way the pipe cuts them", async () => {
    const cuts: number[][] = [[frames.length], [1, frames.length], [2, 61, frames.length]];
    for (let size = 1; size <= 7; size++) cuts.push(Array.from({ length: Math.ceil(frames.length / size) }, (_, i) => Math.min((i + 1) * size, frames.length)));
    for (const ends of cuts) {
      const tap = new ImageStatsTap(frameBytes);
      const stats = tap.beginEpisode([0, 2]);
      tap.endEpisode(3);
      let from = 0;
      for (const end of ends) {
        tap.push(frames.subarray(from, end));
        from = end;
      }
      assert.deepEqual(await stats, expected(), `chunks ending at ${ends.join(", ")}`);
      tap.assertComplete(3);
    }
  });
});
