/**
 * The LeRobot video rollover rule as a function of exact segment sizes: the layout is decided by
 * the sizes and frame counts alone, and the concat script keeps every frame on its 1/fps step.
 */
import assert from "node:assert/strict";
import { BYTES_PER_MB } from "../../coordinator/exports/lerobot/lerobot-layout.js";
import { VideoFilePlan, planVideoFiles, type SegmentSize } from "../../coordinator/exports/lerobot/video-file-plan.js";
import { concatList } from "../../coordinator/exports/lerobot/video-segment-concat.js";

const KIB = 1024;
const limits = (videoFileSizeMb: number, chunksSize = 1000) => ({ videoFileSizeMb, chunksSize });
const slots = (placements: ReturnType<typeof planVideoFiles>) => placements.map((p) => `${p.slot.chunkIndex}/${p.slot.fileIndex}`);

describe("LeRobot video file plan", () => {
  it("starts a new file when the file's segments plus the next reach the limit, as LeRobot's _save_episode_video does", () => {
    // 10 KiB limit: 4 + 4 = 8 < 10 stays, 8 + 2 = 10 reaches it and rolls over.
    const segments: SegmentSize[] = [
      { bytes: 4 * KIB, frames: 10 },
      { bytes: 4 * KIB, frames: 12 },
      { bytes: 2 * KIB, frames: 5 },
      { bytes: 1 * KIB, frames: 7 },
    ];
    const placed = planVideoFiles(segments, limits(10 / 1024));
    assert.deepEqual(slots(placed), ["0/0", "0/0", "0/1", "0/1"]);
    assert.deepEqual(placed.map((p) => [p.fromFrame, p.toFrame, p.startsFile]), [[0, 10, true], [10, 22, false], [0, 5, true], [5, 12, false]]);
  });

  it("puts a segment larger than the limit alone in a file, and the first segment always in the first file", () => {
    const placed = planVideoFiles([{ bytes: 3 * BYTES_PER_MB, frames: 600 }, { bytes: 3 * BYTES_PER_MB, frames: 600 }, { bytes: 1, frames: 1 }], limits(1));
    assert.deepEqual(slots(placed), ["0/0", "0/1", "0/2"]);
    assert.ok(placed.every((p) => p.startsFile && p.fromFrame === 0));
  });

  it("starts a new file when a segment's decoder configuration differs from the open file's, since copied packets decode with one", () => {
    const placed = planVideoFiles([
      { bytes: KIB, frames: 3, decoderConfig: "aa" },
      { bytes: KIB, frames: 3, decoderConfig: "aa" },
      { bytes: KIB, frames: 3, decoderConfig: "bb" },
      { bytes: KIB, frames: 3, decoderConfig: "aa" },
    ], limits(1));
    assert.deepEqual(slots(placed), ["0/0", "0/0", "0/1", "0/2"]);
    assert.deepEqual(placed.map((p) => p.fromFrame), [0, 3, 0, 0]);
  });

  it("moves to the next chunk after chunksSize files", () => {
    const placed = planVideoFiles(Array.from({ length: 5 }, () => ({ bytes: KIB, frames: 3 })), limits(1 / 1024, 2));
    assert.deepEqual(slots(placed), ["0/0", "0/1", "1/0", "1/1", "2/0"]);
  });

  it("gives the same layout for the same segment sizes, however they are paced and interleaved", () => {
    // Seeded sizes around the limit, so many decisions are close calls.
    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const segments = Array.from({ length: 200 }, () => ({ bytes: 1 + Math.floor(random() * 40 * KIB), frames: 1 + Math.floor(random() * 600) }));
    const once = planVideoFiles(segments, limits(0.1));
    assert.deepEqual(planVideoFiles(segments.map((s) => ({ ...s })), limits(0.1)), once);
    // Placed one at a time, as segments finish during an export, with other plans interleaved.
    const plan = new VideoFilePlan(limits(0.1));
    const other = new VideoFilePlan(limits(0.1));
    const stepwise = segments.map((segment, i) => {
      other.place(segments[(i * 7) % segments.length]);
      return plan.place(segment);
    });
    assert.deepEqual(stepwise, once);
    assert.ok(new Set(slots(once)).size > 10, "the sizes roll over many times");
    // Every file's segments stay under the limit unless one segment alone exceeds it.
    const bytesByFile = new Map<string, number[]>();
    once.forEach((p, i) => bytesByFile.set(slots([p])[0], [...(bytesByFile.get(slots([p])[0]) ?? []), segments[i].bytes]));
    for (const sizes of bytesByFile.values()) assert.ok(sizes.length === 1 || sizes.reduce((a, b) => a + b, 0) < 0.1 * BYTES_PER_MB);
  });

  it("refuses a segment without bytes or frames, quoting them", () => {
    assert.throws(() => new VideoFilePlan(limits(1)).place({ bytes: 0, frames: 3 }), /positive whole number of bytes and frames; got 0 bytes, 3 frames/);
    assert.throws(() => new VideoFilePlan(limits(1)).place({ bytes: 10, frames: 0 }), /got 10 bytes, 0 frames/);
  });

  it("gives each segment its duration from the cumulative frame count, so rounding never accumulates", () => {
    const list = concatList([{ path: "/d/a.mp4", frames: 7 }, { path: "/d/it's.mp4", frames: 12 }, { path: "/d/c.mp4", frames: 5 }], 30);
    assert.equal(list, "file '/d/a.mp4'\nduration 233333us\nfile '/d/it'\\''s.mp4'\nduration 400000us\nfile '/d/c.mp4'\nduration 166667us\n");
    const many = concatList(Array.from({ length: 1000 }, (_, i) => ({ path: `/s/${i}.mp4`, frames: 7 })), 30);
    const totalUs = [...many.matchAll(/duration (\d+)us/g)].reduce((sum, m) => sum + Number(m[1]), 0);
    assert.equal(totalUs, Math.round((7000 / 30) * 1e6));
  });
});
