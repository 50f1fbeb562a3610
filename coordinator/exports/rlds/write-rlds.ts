/**
 * Writes an Assay run as an RLDS dataset in TensorFlow Datasets' on-disk layout, which
 * `tfds.builder_from_directory("<outDir>/assay_run/1.0.0")` loads and whose
 * `builder.as_dataset(split="train")` yields one RLDS episode (`steps`, `episode_metadata`) per
 * Assay episode:
 *
 *   <outDir>/assay_run/1.0.0/
 *     dataset_info.json   name, version, description (with the run's pins), splits with shard lengths
 *     features.json       the FeatureConnectors (rlds-features.ts)
 *     metadata.json       the run's pins as JSON (builder.info.metadata)
 *     assay_run-train.tfrecord-00000-of-0000N ...   one tf.train.Example per episode
 *
 * Episodes are read and written one at a time, in the order given. The dataset is built in
 * `1.0.0.incomplete` and renamed into place when whole, so a failed export leaves nothing that looks
 * like a dataset, and a repeated export replaces the previous one.
 */
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import type { ExportEpisode, ExportProgress, ExportRun } from "../export-input.js";
import { ChunkDecompressor } from "../chunk-decompressor.js";
import { EpisodeRecording } from "../episode-steps.js";
import { DATASET_NAME, DATASET_VERSION, datasetInfoJson, FILE_FORMAT, runMetadataJson, SPLIT_NAME } from "./dataset-info.js";
import { EpisodeExampleBuilder } from "./episode-example.js";
import { featuresJson, flatFeatures, rldsFeatureTree } from "./rlds-features.js";
import { checkEpisodeShape, readRunLayout } from "./run-layout.js";
import { ShardedTfRecordWriter } from "./tfrecord-shards.js";

/**
 * Default shard size: 256 MiB, inside the 64 MiB-1 GiB range TFDS aims its shards at
 * (core/utils/shard_utils.py DEFAULT_MIN_SHARD_SIZE / DEFAULT_MAX_SHARD_SIZE).
 */
export const DEFAULT_SHARD_SIZE_BYTES = 256 * 1024 * 1024;

/**
 * The part size of shards written for an export archive (`shardPartBytes`): the archive deletes each
 * part once read, so the dataset's shards and the archive share about one dataset's worth of local
 * disk and page cache instead of two (on this project's virtual machines, writing into pages the
 * kernel has not used for a few seconds cost about 2 ms of CPU per MB; docs/storage.md "Export speed").
 */
export const ARCHIVE_SHARD_PART_BYTES = 16 * 1024 * 1024;

export interface RldsWriteOptions {
  /** Called after each episode is written, with the number written so far. */
  onProgress?: ExportProgress;
  /** A shard is closed and the next one started before it would grow past this. Default 256 MiB. */
  shardSizeBytes?: number;
  /**
   * Leave each shard as part files of whole records, each closed at this size, instead of one file
   * (tfrecord-shards.ts): `shardParts` lists them, and the shard is their concatenation. For an
   * archive that reads and deletes them in turn; the folder alone is then no dataset.
   */
  shardPartBytes?: number;
}

export interface RldsWriteResult {
  episodes: number;
  steps: number;
  /** Shard files, relative to outDir, in order (with `shardPartBytes`, their names in the dataset, not files). */
  shards: string[];
  /** Each shard's files relative to outDir, in order: the shard itself, or with `shardPartBytes` its parts. */
  shardParts: string[][];
  /** Every file of the dataset, relative to outDir (with `shardPartBytes`, the shards as named in the dataset). */
  files: string[];
}

/**
 * Writes `episodes` (already chosen by the caller) of `run` under `outDir`.
 * @throws Error when there are no episodes, an episode's joints or cameras differ from the first
 *   episode's, or a recording cannot be read; nothing is left in place then
 */
export async function writeRldsDataset(run: ExportRun, episodes: ExportEpisode[], outDir: string, options: RldsWriteOptions = {}): Promise<RldsWriteResult> {
  const shardSizeBytes = options.shardSizeBytes ?? DEFAULT_SHARD_SIZE_BYTES;
  if (!Number.isSafeInteger(shardSizeBytes) || shardSizeBytes <= 0) {
    throw new Error(`shardSizeBytes must be a positive integer number of bytes; got ${shardSizeBytes}`);
  }
  const partBytes = options.shardPartBytes;
  if (partBytes !== undefined && (!Number.isSafeInteger(partBytes) || partBytes <= 0)) {
    throw new Error(`shardPartBytes must be a positive integer number of bytes; got ${partBytes}`);
  }
  if (episodes.length === 0) throw new Error("no episodes to export: an RLDS dataset needs at least one episode (TFDS cannot read an empty split)");

  // One decompressor for the whole export: an episode's chunks are decompressed into the buffers the
  // previous episode's used, recycled once its Example is written (nothing holds its frames then).
  const decompressor = await ChunkDecompressor.create();
  const layout = await readRunLayout(episodes, { decompressor });
  const features = rldsFeatureTree(layout);
  const declared = flatFeatures(features);

  const finalDir = join(outDir, DATASET_NAME, DATASET_VERSION);
  const workDir = `${finalDir}.incomplete`;
  await rm(workDir, { recursive: true, force: true });
  await mkdir(workDir, { recursive: true });
  const shards = new ShardedTfRecordWriter(workDir, { dataset: DATASET_NAME, split: SPLIT_NAME, fileFormat: FILE_FORMAT }, shardSizeBytes, partBytes);
  try {
    let steps = 0;
    for (const [done, episode] of episodes.entries()) {
      const recording = await EpisodeRecording.openForSteps(episode.mcap.path, { decompressor });
      try {
        checkEpisodeShape(layout, episode, recording.header);
        const example = new EpisodeExampleBuilder(run, episode, layout, declared);
        for await (const step of recording.steps()) example.addStep(step);
        await shards.write(example.finish());
        steps += example.steps;
      } finally {
        await recording.close();
      }
      decompressor.recycle();
      options.onProgress?.(done + 1);
    }
    const split = await shards.finish();
    const metadataFiles: Array<[string, unknown]> = [
      ["features.json", featuresJson(features)],
      ["dataset_info.json", datasetInfoJson(run, layout, { shardLengths: split.shardLengths, numBytes: split.dataBytes })],
      ["metadata.json", runMetadataJson(run, layout)],
    ];
    for (const [name, content] of metadataFiles) await writeFile(join(workDir, name), `${JSON.stringify(content, null, 2)}\n`);

    await rm(finalDir, { recursive: true, force: true });
    await rename(workDir, finalDir);
    const shardPaths = split.fileNames.map((name) => relative(outDir, join(finalDir, name)));
    return {
      episodes: episodes.length,
      steps,
      shards: shardPaths,
      shardParts: split.parts.map((files) => files.map((name) => relative(outDir, join(finalDir, name)))),
      files: [...metadataFiles.map(([name]) => relative(outDir, join(finalDir, name))), ...shardPaths],
    };
  } catch (error) {
    await shards.closeShard();
    await rm(workDir, { recursive: true, force: true });
    throw error;
  }
}
