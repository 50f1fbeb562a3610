/**
 * The LeRobot v3.0 writer, checked with readers of its own: DuckDB for every Parquet file, an MP4
 * box reader written here from ISO/IEC 14496-12 for frame counts and rates, and the ffmpeg binary
 * for decoding frames at the timestamps the episode table gives.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import ffmpegInstaller from "@ffmpeg-installer/ffmpeg";
import type { ExportEpisode, ExportRun } from "../../coordinator/exports/export-input.js";
import { writeLeRobotDataset } from "../../coordinator/exports/lerobot/write-lerobot.js";
import { frameLevel, writeFixtureEpisodes } from "../support/export-fixtures.js";
import { frameChecksums, probeVideo, videoTrack } from "../support/mp4-video.js";

const CAMERAS = [
  { name: "top", width: 32, height: 24 },
  { name: "wrist", width: 16, height: 12, everyNthStep: 2 },
];
const FPS = 30;

/** Mean grey level of the frame ffmpeg shows at `timestampS` (the first frame at or after it). */
function greyLevelAt(path: string, timestampS: number): number {
  // Half a frame early, so rounding of the timestamp cannot skip the frame it names.
  const seekS = Math.max(0, timestampS - 0.5 / FPS);
  const result = spawnSync(ffmpegInstaller.path, ["-v", "error", "-ss", seekS.toFixed(6), "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", "pipe:1"]);
  assert.equal(result.status, 0, result.stderr.toString());
  assert.ok(result.stdout.length > 0, `no frame at ${timestampS} s in ${path}`);
  return result.stdout.reduce((sum, v) => sum + v, 0) / result.stdout.length;
}

// ---- the dataset, read back ----

type Row = Record<string, any>;

async function query(db: DuckDBConnection, sql: string): Promise<Row[]> {
  return (await db.runAndReadAll(sql)).getRowObjectsJS() as Row[];
}

function filesUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(root, path));
    }
  };
  walk(root);
  return out.sort();
}

function pathFor(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)(?::03d)?\}/g, (whole, name: string) => (whole.includes(":03d") ? String(values[name]).padStart(3, "0") : String(values[name])));
}

/**
 * Checks every cross-reference of the dataset at `root` written from `episodes`, and returns the
 * numbers of data and video files.
 */
async function checkDataset(db: DuckDBConnection, root: string, run: ExportRun, episodes: ExportEpisode[]): Promise<{ dataFiles: number; videoFiles: Record<string, number> }> {
  const info = JSON.parse(readFileSync(join(root, "meta/info.json"), "utf8"));
  assert.equal(info.codebase_version, "v3.0");
  assert.equal(info.fps, FPS);
  assert.equal(info.robot_type, "so101");
  assert.equal(info.data_path, "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet");
  assert.equal(info.video_path, "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4");
  assert.deepEqual(Object.keys(info.features), [
    "action", "observation.state", "observation.images.top", "observation.images.wrist", "timestamp", "frame_index", "episode_index", "index", "task_index",
  ]);
  assert.deepEqual(info.features.action, { dtype: "float32", shape: [6], names: ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"] });
  assert.deepEqual(info.features.timestamp, { dtype: "float32", shape: [1], names: null });
  const top = info.features["observation.images.top"];
  assert.deepEqual([top.dtype, top.shape, top.names], ["video", [24, 32, 3], ["height", "width", "channels"]]);
  assert.deepEqual([top.info["video.codec"], top.info["video.pix_fmt"], top.info["video.fps"], top.info["video.height"], top.info["video.width"]], ["h264", "yuv420p", FPS, 24, 32]);
  assert.equal(info.total_episodes, episodes.length);
  assert.deepEqual(info.splits, { train: `0:${episodes.length}` });
  const { videos: videoSources, ...record } = info.assay;
  assert.deepEqual(record, { run_id: run.runId, kind: run.kind, resolved_pins: run.resolvedPins, created: run.created, completed: run.completed, source: "Assay evaluation run" });
  for (const camera of CAMERAS) {
    const sources = videoSources[`observation.images.${camera.name}`];
    assert.equal(sources.copied_episodes + sources.encoded_episodes, episodes.length, `every episode of ${camera.name} was copied or encoded`);
    assert.equal(Object.values(sources.encoded_because as Record<string, number>).reduce((a, b) => a + b, 0), sources.encoded_episodes);
  }

  const data = await query(db, `select *, filename from read_parquet('${root}/data/*/*.parquet', filename = true) order by "index"`);
  assert.equal(data.length, info.total_frames);
  data.forEach((row, i) => assert.equal(Number(row.index), i, "index runs 0..total_frames-1 without a gap"));

  const tasks = await query(db, `select task_index, task from '${root}/meta/tasks.parquet'`);
  assert.equal(tasks.length, info.total_tasks);
  const taskByIndex = new Map(tasks.map((t) => [Number(t.task_index), t.task as string]));
  const pandas = await query(db, `select value from parquet_kv_metadata('${root}/meta/tasks.parquet') where decode(key) = 'pandas'`);
  assert.deepEqual(JSON.parse(Buffer.from(pandas[0].value).toString()).index_columns, ["task"], "pandas reads the task column back as the index");

  const table = await query(db, `select *, filename from read_parquet('${root}/meta/episodes/*/*.parquet', filename = true) order by episode_index`);
  assert.equal(table.length, episodes.length);
  const videoFiles: Record<string, number> = {};
  for (const camera of CAMERAS) {
    const key = `observation.images.${camera.name}`;
    const byFile = new Map<string, Row[]>();
    for (const ep of table) {
      const file = pathFor(info.video_path, { video_key: key, chunk_index: Number(ep[`videos/${key}/chunk_index`]), file_index: Number(ep[`videos/${key}/file_index`]) });
      byFile.set(file, [...(byFile.get(file) ?? []), ep]);
    }
    videoFiles[camera.name] = byFile.size;
    for (const [file, inFile] of byFile) {
      const track = videoTrack(join(root, file));
      const frames = inFile.reduce((sum, ep) => sum + Number(ep.length), 0);
      assert.equal(track.samples, frames, `${file} holds one frame per data row of its episodes`);
      assert.equal(track.deltas.length, 1, `${file} has a constant frame rate`);
      assert.equal(track.deltas[0].count, frames);
      assert.equal(track.deltas[0].delta / track.timescale, 1 / FPS);
      let offset = 0;
      for (const ep of inFile) {
        assert.equal(ep[`videos/${key}/from_timestamp`], offset / FPS);
        offset += Number(ep.length);
        assert.equal(ep[`videos/${key}/to_timestamp`], offset / FPS);
      }
    }
  }

  let firstIndex = 0;
  for (const [e, ep] of table.entries()) {
    const input = episodes[e];
    const length = Number(ep.length);
    assert.equal(Number(ep.episode_index), e);
    assert.deepEqual(ep.tasks, [input.instruction]);
    const rows = data.filter((row) => Number(row.episode_index) === e);
    assert.equal(rows.length, length);
    assert.equal(Number(ep.dataset_from_index), firstIndex);
    assert.equal(Number(ep.dataset_to_index), firstIndex + length);
    assert.deepEqual(rows.map((row) => Number(row.index)), Array.from({ length }, (_, k) => firstIndex + k));
    firstIndex += length;
    const dataFile = join(root, pathFor(info.data_path, { chunk_index: Number(ep["data/chunk_index"]), file_index: Number(ep["data/file_index"]) }));
    for (const [k, row] of rows.entries()) {
      assert.equal(Number(row.frame_index), k);
      assert.equal(row.timestamp, Math.fround(k / FPS));
      assert.equal(row.filename, dataFile, `episode ${e}'s rows are in the file its data/chunk_index, data/file_index name`);
      assert.equal(taskByIndex.get(Number(row.task_index)), input.instruction);
    }
    assert.equal(ep.filename, join(root, pathFor("meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet", { chunk_index: Number(ep["meta/episodes/chunk_index"]), file_index: Number(ep["meta/episodes/file_index"]) })));
    assert.deepEqual(
      [ep["assay/episode_id"], Number(ep["assay/run_episode_index"]), ep["assay/outcome"], ep["assay/policy_succeeded"], ep["assay/intervened"], ep["assay/failure_cluster"], JSON.parse(ep["assay/replay_spec"]), ep["assay/cell_id"], Number(ep["assay/seed"]), ep["assay/robot"], ep["assay/environment"], ep["assay/task"]],
      [input.episodeId, input.index, input.outcome, input.policySucceeded, input.intervened, input.failureCluster, input.replaySpec, input.cellId, input.seed, input.robot, input.environment, input.task],
    );
    // The frames of the episode sit where the table says, across concatenation and rollover.
    for (const camera of CAMERAS) {
      const key = `observation.images.${camera.name}`;
      const file = join(root, pathFor(info.video_path, { video_key: key, chunk_index: Number(ep[`videos/${key}/chunk_index`]), file_index: Number(ep[`videos/${key}/file_index`]) }));
      const latest = (step: number) => frameLevel(step - (step % (camera.everyNthStep ?? 1)));
      const from = ep[`videos/${key}/from_timestamp`];
      assert.ok(Math.abs(greyLevelAt(file, from) - latest(0)) <= 4, `${key} episode ${e} starts with its own first frame`);
      assert.ok(Math.abs(greyLevelAt(file, from + (length - 1) / FPS) - latest(length - 1)) <= 4, `${key} episode ${e} ends with its own last frame`);
    }
  }
  const dataFiles = new Set(data.map((row) => row.filename)).size;
  return { dataFiles, videoFiles };
}

describe("LeRobot v3.0 export", function () {
  this.timeout(60_000);
  let dir: string;
  let run: ExportRun;
  let episodes: ExportEpisode[];
  let instance: DuckDBInstance;
  let db: DuckDBConnection;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "export-lerobot-"));
    ({ run, episodes } = await writeFixtureEpisodes(join(dir, "in"), { episodes: 8, cameras: CAMERAS, controlRateHz: FPS }));
    instance = await DuckDBInstance.create(":memory:");
    db = await instance.connect();
  });
  after(() => {
    db?.closeSync();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes a v3.0 dataset whose info.json, data rows, episode table, tasks and videos agree", async () => {
    const root = join(dir, "default");
    const progress: number[] = [];
    const result = await writeLeRobotDataset(run, episodes.slice(0, 4), root, { onProgress: (n) => progress.push(n) });
    assert.deepEqual(progress, [1, 2, 3, 4]);
    assert.deepEqual(result.files, filesUnder(root));
    assert.deepEqual(result.files, [
      "README.md", "data/chunk-000/file-000.parquet", "meta/episodes/chunk-000/file-000.parquet", "meta/info.json", "meta/stats.json", "meta/tasks.parquet",
      "videos/observation.images.top/chunk-000/file-000.mp4", "videos/observation.images.wrist/chunk-000/file-000.mp4",
    ]);
    assert.deepEqual([result.episodes, result.tasks], [4, 2]);
    const files = await checkDataset(db, root, run, episodes.slice(0, 4));
    assert.deepEqual(files, { dataFiles: 1, videoFiles: { top: 1, wrist: 1 } });
    const card = readFileSync(join(root, "README.md"), "utf8");
    assert.match(card, /^---\ntask_categories:\n- robotics\ntags:\n- LeRobot\n/);
    assert.ok(card.includes(run.runId) && card.includes("**Episodes:** 4") && card.includes("| perturbation_rev | assay-perturb@1 |"));
  });

  it("rolls data and video files over by size and keeps every cross-reference", async () => {
    const root = join(dir, "rollover");
    const result = await writeLeRobotDataset(run, episodes, root, { dataFileSizeMb: 0.004, videoFileSizeMb: 0.003 });
    const files = await checkDataset(db, root, run, episodes);
    assert.ok(files.dataFiles >= 2, `${files.dataFiles} data files`);
    assert.ok(files.videoFiles.top >= 2 && files.videoFiles.wrist >= 2, JSON.stringify(files.videoFiles));
    assert.deepEqual(result.files, filesUnder(root));
    const info = JSON.parse(readFileSync(join(root, "meta/info.json"), "utf8"));
    assert.deepEqual([info.data_files_size_in_mb, info.video_files_size_in_mb, info.chunks_size], [0.004, 0.003, 1000]);
  });

  it("writes stats.json and per-episode stats that agree with the data", async () => {
    const root = join(dir, "stats");
    await writeLeRobotDataset(run, episodes, root);
    const stats = JSON.parse(readFileSync(join(root, "meta/stats.json"), "utf8"));
    const total = (await query(db, `select count(*) as n from '${root}/data/*/*.parquet'`))[0].n;
    for (const feature of ["action", "observation.state"]) {
      const s = stats[feature];
      assert.deepEqual(Object.keys(s), ["min", "max", "mean", "std", "count", "q01", "q10", "q50", "q90", "q99"]);
      assert.deepEqual(s.count, [Number(total)]);
      for (let j = 0; j < 6; j++) {
        const [agg] = await query(db, `select min(v) as min, max(v) as max, avg(v) as mean, stddev_pop(v) as std from (select "${feature}"[${j + 1}] as v from '${root}/data/*/*.parquet')`);
        assert.equal(s.min[j], agg.min);
        assert.equal(s.max[j], agg.max);
        assert.ok(Math.abs(s.mean[j] - agg.mean) < 1e-9, `${feature} mean[${j}] ${s.mean[j]} vs ${agg.mean}`);
        assert.ok(Math.abs(s.std[j] - agg.std) < 1e-6, `${feature} std[${j}] ${s.std[j]} vs ${agg.std}`);
        assert.ok(s.min[j] <= s.q01[j] + 1e-9 && s.q01[j] <= s.q50[j] && s.q50[j] <= s.q99[j] && s.q99[j] <= s.max[j] + 1e-9);
      }
    }
    assert.deepEqual(stats.frame_index.min, [0]);
    assert.deepEqual(stats.index.max, [Number(total) - 1]);
    assert.ok(readFileSync(join(root, "meta/stats.json"), "utf8").includes('"min": [\n            0.0\n        ]'), "float stats keep a decimal point, so numpy reads floats");
    const image = stats["observation.images.top"];
    assert.equal(image.mean.length, 3);
    assert.deepEqual(image.mean.map((channel: number[][]) => [channel.length, channel[0].length]), [[1, 1], [1, 1], [1, 1]], "image stats have shape (3, 1, 1)");
    // Fixture frames are grey: every channel spans the darkest and brightest level the steps had.
    const lengths = (await query(db, `select count(*) as n from '${root}/data/*/*.parquet' group by episode_index`)).map((row) => Number(row.n));
    const levels = lengths.flatMap((length) => Array.from({ length }, (_, k) => frameLevel(k)));
    for (const [stat, level] of [["min", Math.min(...levels)], ["max", Math.max(...levels)]] as const) {
      assert.ok(image[stat].every((channel: number[][]) => Math.abs(channel[0][0] * 255 - level) <= 4), `${stat} ${JSON.stringify(image[stat])} vs level ${level}`);
    }
    assert.deepEqual(image.count, [Number(total)], "episodes under 100 frames sample every frame");

    const table = await query(db, `select episode_index, "stats/action/min" as amin, "stats/action/max" as amax, "stats/index/min" as imin, "stats/index/max" as imax, "stats/observation.images.wrist/mean" as wmean from '${root}/meta/episodes/*/*.parquet' order by episode_index`);
    for (const ep of table) {
      const [agg] = await query(db, `select min("action"[1]) as amin, max("action"[6]) as amax, min("index") as imin, max("index") as imax from '${root}/data/*/*.parquet' where episode_index = ${ep.episode_index}`);
      assert.deepEqual([ep.amin[0], ep.amax[5], ep.imin, ep.imax], [agg.amin, agg.amax, [Number(agg.imin)], [Number(agg.imax)]]);
      assert.equal(ep.wmean.length, 3);
    }
  });

  it("refuses an episode whose joints or cameras differ from the first one's, naming it", async () => {
    const fiveJoints = await writeFixtureEpisodes(join(dir, "in-5"), { episodes: 1, cameras: CAMERAS, jointNames: ["a", "b", "c", "d", "e"] });
    await assert.rejects(writeLeRobotDataset(run, [episodes[0], fiveJoints.episodes[0]], join(dir, "bad-joints")), /episode ep_fixture_0 \(#1\) has 5 joints \[a, b, c, d, e\] .* episode ep_fixture_0 \(#0\) with 6/);
    const oneCamera = await writeFixtureEpisodes(join(dir, "in-1cam"), { episodes: 1, cameras: [CAMERAS[0]] });
    await assert.rejects(writeLeRobotDataset(run, [episodes[0], oneCamera.episodes[0]], join(dir, "bad-cameras")), /episode ep_fixture_0 \(#1\) has cameras \[top\] .* cameras \[top, wrist\]/);
  });

  it("refuses a non-empty outDir and a fractional frame rate", async () => {
    const used = join(dir, "used");
    mkdirSync(used);
    writeFileSync(join(used, "notes.txt"), "not a dataset");
    await assert.rejects(writeLeRobotDataset(run, episodes, used), /outDir must be empty or absent; .*used holds 1 entries \(notes.txt\)/);
    await assert.rejects(writeLeRobotDataset({ ...run, controlRateHz: 12.5 }, episodes, join(dir, "fractional")), /whole number of frames per second; the run's control rate is 12.5 Hz/);
    assert.ok(!existsSync(join(dir, "fractional")));
  });
});

describe("LeRobot v3.0 export from the cells' own videos", function () {
  this.timeout(60_000);
  let dir: string;
  let instance: DuckDBInstance;
  let db: DuckDBConnection;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "export-lerobot-copy-"));
    instance = await DuckDBInstance.create(":memory:");
    db = await instance.connect();
  });
  after(() => {
    db?.closeSync();
    rmSync(dir, { recursive: true, force: true });
  });

  it("copies a camera's video where it has one frame per control step, encodes where frames and steps differ, and says which", async () => {
    // top: one frame per step, except episode 2, whose step 5 frame was captured outside any step; wrist: every other step.
    const { run, episodes } = await writeFixtureEpisodes(join(dir, "in"), { episodes: 4, cameras: CAMERAS, controlRateHz: FPS, cellVideos: true, strayFrame: { episode: 2, step: 5, camera: "top" } });
    const root = join(dir, "copied");
    await writeLeRobotDataset(run, episodes, root);
    await checkDataset(db, root, run, episodes);
    const info = JSON.parse(readFileSync(join(root, "meta/info.json"), "utf8"));
    assert.deepEqual(info.assay.videos, {
      "observation.images.top": { copied_episodes: 3, encoded_episodes: 1, encoded_because: { frames_differ_from_steps: 1 } },
      "observation.images.wrist": { copied_episodes: 0, encoded_episodes: 4, encoded_because: { other_rate: 4 } },
    });
    // The encoder settings recorded are the ones each camera's videos were made with: the cell's for top, LeRobot's for wrist.
    const settings = (key: string) => ["video.codec", "video.pix_fmt", "video.g", "video.crf", "video.preset"].map((k) => info.features[key].info[k]);
    assert.deepEqual(settings("observation.images.top"), ["h264", "yuv420p", 60, 28, "ultrafast"]);
    assert.deepEqual(settings("observation.images.wrist"), ["h264", "yuv420p", 2, 23, "superfast"]);

    // Copied, not re-encoded: the dataset's top video decodes to exactly the cells' pictures, episode after episode
    // (the encoded episode joins the same file, since its encoder used the cell's settings).
    const table = await query(db, `select episode_index, length, "videos/observation.images.top/file_index" as file, "videos/observation.images.top/from_timestamp" as "from", "videos/observation.images.top/to_timestamp" as "to" from '${root}/meta/episodes/*/*.parquet' order by episode_index`);
    assert.ok(table.every((ep) => Number(ep.file) === 0), "one file holds copied and encoded episodes");
    const file = join(root, "videos/observation.images.top/chunk-000/file-000.mp4");
    const probe = probeVideo(file);
    assert.deepEqual([probe.codec, probe.pixFmt, probe.decodedFrames], ["h264", "yuv420p", table.reduce((sum, ep) => sum + Number(ep.length), 0)]);
    const inFile = frameChecksums(file);
    for (const [e, ep] of table.entries()) {
      const own = inFile.slice(Math.round(ep.from * FPS), Math.round(ep.to * FPS));
      assert.equal(own.length, Number(ep.length), `episode ${e}: from/to timestamps span its frames`);
      if (e === 2) assert.notDeepEqual(own, frameChecksums(episodes[e].videos.top.path), "episode 2 was encoded again from its steps");
      else assert.deepEqual(own, frameChecksums(episodes[e].videos.top.path), `episode ${e} is the cell's video, copied`);
    }
    const stats = JSON.parse(readFileSync(join(root, "meta/stats.json"), "utf8"))["observation.images.top"];
    assert.ok(stats.count[0] > 0 && stats.count[0] <= 3 * 10 + 100, `image statistics from a bounded sample: ${stats.count[0]} frames`);
  });
});
