/**
 * Writes an Assay run's episodes as a LeRobot dataset, format v3.0, the way LeRobot's own
 * `LeRobotDataset` records one (huggingface/lerobot `src/lerobot/datasets/`): frames in
 * `data/`, one H.264 video per camera in `videos/`, and `meta/` with info.json, stats.json,
 * tasks.parquet and the episode table. Episodes stream through one at a time; each camera's episode
 * is the cell's own video copied as it is where it has one frame per control step, else encoded to
 * a segment of its own, and a file's segments are joined without re-encoding
 * (camera-video-writer.ts), so the file layout follows from exact sizes.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ChunkDecompressor } from "../chunk-decompressor.js";
import type { ExportEpisode, ExportProgress, ExportRun } from "../export-input.js";
import { VIDEO_ENCODING, cellVideoEncoding, videoSize } from "./camera-encoder-process.js";
import { CameraVideoWriter, SEGMENTS_DIR } from "./camera-video-writer.js";
import { datasetCard } from "./dataset-card.js";
import { datasetInfo, type ShardLimits } from "./dataset-info.js";
import { DataFileWriter } from "./data-file-writer.js";
import { blackFrame, episodeLabel, readEpisodeFrames, readFeatureSource } from "./episode-frames.js";
import { checkCellVideo, type EncodeReason } from "./episode-video-source.js";
import { EpisodesTableWriter, assayColumnsOf, type EpisodeRecord } from "./episodes-table-writer.js";
import { aggregateStats } from "./feature-stats.js";
import { cameraVideoKey, datasetFeatures, type CameraFeature } from "./lerobot-features.js";
import {
  CARD_PATH, DEFAULT_CHUNKS_SIZE, DEFAULT_DATA_FILE_SIZE_MB, DEFAULT_VIDEO_FILE_SIZE_MB, INFO_PATH, STATS_PATH,
} from "./lerobot-layout.js";
import { statsJson, type NamedStats } from "./stats-layout.js";
import { TaskTable, writeTasksTable } from "./tasks-table.js";

export interface LeRobotExportOptions {
  /** Called after each episode with the number written so far. */
  onProgress?: ExportProgress;
  /** A data (and episode table) Parquet file rolls over past this many MiB; default 100 as in LeRobot. */
  dataFileSizeMb?: number;
  /** A video file rolls over past this many MiB; default 200 as in LeRobot. */
  videoFileSizeMb?: number;
  /** Files per chunk directory; default 1000 as in LeRobot. */
  chunksSize?: number;
}

export interface LeRobotExportResult {
  episodes: number;
  frames: number;
  tasks: number;
  /** Every file written, relative to the dataset root, sorted. */
  files: string[];
}

function compileLimits(run: ExportRun, episodes: ExportEpisode[], options: LeRobotExportOptions): ShardLimits {
  const limits = {
    chunksSize: options.chunksSize ?? DEFAULT_CHUNKS_SIZE,
    dataFileSizeMb: options.dataFileSizeMb ?? DEFAULT_DATA_FILE_SIZE_MB,
    videoFileSizeMb: options.videoFileSizeMb ?? DEFAULT_VIDEO_FILE_SIZE_MB,
  };
  if (!Number.isInteger(run.controlRateHz) || run.controlRateHz <= 0) {
    throw new Error(`a LeRobot dataset needs a whole number of frames per second; the run's control rate is ${run.controlRateHz} Hz`);
  }
  if (episodes.length === 0) throw new Error("a LeRobot dataset needs at least one episode; got none");
  if (!Number.isInteger(limits.chunksSize) || limits.chunksSize <= 0) throw new Error(`chunksSize must be a positive integer; got ${limits.chunksSize}`);
  for (const key of ["dataFileSizeMb", "videoFileSizeMb"] as const) {
    if (!(limits[key] > 0 && Number.isFinite(limits[key]))) throw new Error(`${key} must be a positive number of MiB; got ${limits[key]}`);
  }
  return limits;
}

function prepareRoot(outDir: string): void {
  mkdirSync(outDir, { recursive: true });
  const present = readdirSync(outDir);
  if (present.length > 0) throw new Error(`outDir must be empty or absent; ${outDir} holds ${present.length} entries (${present.slice(0, 3).join(", ")})`);
}

/**
 * Writes `episodes` (episode_index 0..N-1 in this order) of `run` as a LeRobot v3.0 dataset in
 * `outDir`, which must be empty or absent. Features come from the first episode; an episode with
 * another joint count or camera set throws. On failure the ffmpeg processes are killed and the
 * partial tree stays for the caller to remove.
 */
export async function writeLeRobotDataset(run: ExportRun, episodes: ExportEpisode[], outDir: string, options: LeRobotExportOptions = {}): Promise<LeRobotExportResult> {
  const limits = compileLimits(run, episodes, options);
  const fps = run.controlRateHz;
  prepareRoot(outDir);

  const source = await readFeatureSource(episodes[0]);
  // A camera copies the cells' videos when the first episode's can be copied; its encoded episodes then use the cell's settings.
  const cameras: Array<CameraFeature & { notCopied: { reason: EncodeReason; detail: string } | undefined }> = [];
  for (const name of source.cameras) {
    const geometry = source.geometry.get(name)!;
    const first = await checkCellVideo(episodes[0].videos[name], { steps: source.steps, recordedFrames: source.cameraFrames.get(name) ?? 0, fps }, videoSize(geometry));
    const notCopied = "reason" in first ? { reason: first.reason, detail: `the first episode's video cannot be copied, so every episode is encoded (${first.detail})` } : undefined;
    cameras.push({ name, videoKey: cameraVideoKey(name), ...geometry, encoding: notCopied ? VIDEO_ENCODING : cellVideoEncoding(fps), notCopied });
  }
  const features = datasetFeatures(source.jointNames, cameras, fps);
  const videoWriters = new Map(cameras.map((c) => [c.name, new CameraVideoWriter(outDir, c.videoKey, c, fps, limits, () => blackFrame(c), c.encoding, c.notCopied)]));
  const videoSources = new Map(cameras.map((c) => [c.videoKey, { copied: 0, encoded: 0, encodedBecause: {} as Record<string, number> }]));
  const dataWriter = new DataFileWriter(outDir, limits);
  const statsFeatures = Object.entries(features).map(([name, feature]) => ({ name, isImage: feature.dtype === "video" }));
  const episodesWriter = new EpisodesTableWriter(outDir, cameras.map((c) => c.videoKey), statsFeatures, limits);
  const tasks = new TaskTable();
  let datasetStats: Map<string, NamedStats> | undefined;
  // Episode rows wait for their videos' placements and image statistics, which come once each segment's ffmpeg exits.
  const waiting: Array<{ record: EpisodeRecord; ready: boolean; settled: Promise<void> }> = [];
  const writeReadyRows = async () => {
    while (waiting.length > 0 && waiting[0].ready) {
      const { record } = waiting.shift()!;
      await episodesWriter.add(record);
      datasetStats = datasetStats
        ? new Map([...datasetStats].map(([name, entry]) => [name, { ...entry, stats: aggregateStats(entry.stats, record.stats.get(name)!.stats) }]))
        : new Map(record.stats);
    }
  };

  // One decompressor for the whole export, as RLDS's: an episode's chunks are decompressed into the
  // buffers the previous episode's used, recycled once the sample decoders' pipes have taken that
  // episode's sampled frames (an encoder is given copies: camera-video-writer.ts).
  const decompressor = await ChunkDecompressor.create();
  let frames = 0;
  try {
    for (const [position, episode] of episodes.entries()) {
      const label = episodeLabel(episode, position);
      const taskIndex = tasks.indexOf(episode.instruction);
      const read = await readEpisodeFrames(episode, label, source, videoWriters, { episodeIndex: position, firstIndex: frames, taskIndex, fps }, { decompressor });
      await Promise.all([...videoWriters.values()].map((writer) => writer.released()));
      decompressor.recycle();
      const length = read.rows.action.length;
      const dataSlot = await dataWriter.writeEpisode(read.rows);
      const record: EpisodeRecord = {
        episodeIndex: position,
        tasks: [episode.instruction],
        length,
        data: dataSlot,
        datasetFromIndex: frames,
        datasetToIndex: frames + length,
        videos: new Map(),
        stats: new Map(statsFeatures.map(({ name, isImage }) => [name, { stats: read.stats.get(name)!, isImage }])),
        assay: assayColumnsOf(episode),
      };
      frames += length;
      for (const c of cameras) {
        const tally = videoSources.get(c.videoKey)!;
        const why = read.encoded.get(c.name);
        if (why) {
          tally.encoded++;
          tally.encodedBecause[why.reason] = (tally.encodedBecause[why.reason] ?? 0) + 1;
        } else {
          tally.copied++;
        }
      }
      // Each camera's segment is placed, and its statistics come back, once its ffmpeg finishes.
      const videos = cameras.map(async (c) => {
        const video = read.videos.get(c.videoKey)!;
        record.videos.set(c.videoKey, await video.placement);
        record.stats.set(c.videoKey, { stats: await video.stats, isImage: true });
      });
      const entry = { record, ready: false, settled: Promise.all(videos).then(() => void (entry.ready = true)) };
      entry.settled.catch(() => undefined); // a failure surfaces through close() or the final wait
      waiting.push(entry);
      await writeReadyRows();
      options.onProgress?.(position + 1);
    }
    // The cameras' files are joined at once, not one camera after the other (each join is an ffmpeg of its own).
    await Promise.all([...videoWriters.values()].map((writer) => writer.close()));
    rmSync(join(outDir, SEGMENTS_DIR), { recursive: true, force: true });
    // Every segment was placed and every frame came back from ffmpeg (close() checks), so the last episodes settle.
    await Promise.all(waiting.map((entry) => entry.settled));
    await writeReadyRows();
    await episodesWriter.close();
    await dataWriter.close();
  } catch (error) {
    await Promise.all([...videoWriters.values()].map((writer) => writer.abort()));
    throw error;
  }

  const totals = { episodes: episodes.length, frames, tasks: tasks.size };
  const info = datasetInfo(run, features, totals, limits, videoSources);
  mkdirSync(join(outDir, "meta"), { recursive: true });
  const tasksFile = await writeTasksTable(outDir, tasks);
  writeFileSync(join(outDir, STATS_PATH), statsJson(datasetStats!));
  writeFileSync(join(outDir, INFO_PATH), JSON.stringify(info, null, 4));
  writeFileSync(join(outDir, CARD_PATH), datasetCard(run, info, totals));
  const files = [
    ...dataWriter.files,
    ...[...videoWriters.values()].flatMap((writer) => writer.files),
    ...episodesWriter.files,
    tasksFile, STATS_PATH, INFO_PATH, CARD_PATH,
  ].sort();
  return { ...totals, files };
}
