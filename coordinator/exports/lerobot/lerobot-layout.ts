/**
 * Where a LeRobot v3.0 dataset keeps its files, as LeRobot's `datasets/utils.py` names them: the
 * path templates written into `meta/info.json`, the default shard limits, and the chunk/file
 * numbering that rolls a shard over (`update_chunk_file_indices`).
 */

/** `CODEBASE_VERSION` of `datasets/dataset_metadata.py`. */
export const CODEBASE_VERSION = "v3.0";

/** Max files per chunk directory (`DEFAULT_CHUNK_SIZE`). */
export const DEFAULT_CHUNKS_SIZE = 1000;
/** A data or episodes Parquet file rolls over past this size (`DEFAULT_DATA_FILE_SIZE_IN_MB`). */
export const DEFAULT_DATA_FILE_SIZE_MB = 100;
/** A video file rolls over past this size (`DEFAULT_VIDEO_FILE_SIZE_IN_MB`). */
export const DEFAULT_VIDEO_FILE_SIZE_MB = 200;

export const INFO_PATH = "meta/info.json";
export const STATS_PATH = "meta/stats.json";
export const TASKS_PATH = "meta/tasks.parquet";
export const CARD_PATH = "README.md";

const CHUNK_FILE_PATTERN = "chunk-{chunk_index:03d}/file-{file_index:03d}";
export const DEFAULT_EPISODES_PATH = `meta/episodes/${CHUNK_FILE_PATTERN}.parquet`;
export const DEFAULT_DATA_PATH = `data/${CHUNK_FILE_PATTERN}.parquet`;
export const DEFAULT_VIDEO_PATH = `videos/{video_key}/${CHUNK_FILE_PATTERN}.mp4`;

/** LeRobot measures file sizes in MiB (`get_file_size_in_mb`: bytes / 1024**2). */
export const BYTES_PER_MB = 1024 ** 2;

/** One shard's place: `chunk-<chunkIndex>/file-<fileIndex>`. */
export interface FileSlot {
  chunkIndex: number;
  fileIndex: number;
}

export const FIRST_SLOT: FileSlot = { chunkIndex: 0, fileIndex: 0 };

/** The shard after `slot`: the next file, or the first file of the next chunk once a chunk holds `chunksSize` files. */
export function nextSlot(slot: FileSlot, chunksSize: number): FileSlot {
  return slot.fileIndex === chunksSize - 1
    ? { chunkIndex: slot.chunkIndex + 1, fileIndex: 0 }
    : { chunkIndex: slot.chunkIndex, fileIndex: slot.fileIndex + 1 };
}

/**
 * Fills a LeRobot path template the way Python's `str.format` does for the fields it uses:
 * `{name}` and zero-padded `{name:03d}`.
 */
export function formatPath(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)(?::0(\d+)d)?\}/g, (whole, name: string, width: string | undefined) => {
    const value = values[name];
    if (value === undefined) throw new Error(`path template ${template} needs "${name}"; got only ${Object.keys(values).join(", ")}`);
    return width ? String(value).padStart(Number(width), "0") : String(value);
  });
}

export function dataFilePath(slot: FileSlot): string {
  return formatPath(DEFAULT_DATA_PATH, { chunk_index: slot.chunkIndex, file_index: slot.fileIndex });
}

export function episodesFilePath(slot: FileSlot): string {
  return formatPath(DEFAULT_EPISODES_PATH, { chunk_index: slot.chunkIndex, file_index: slot.fileIndex });
}

export function videoFilePath(videoKey: string, slot: FileSlot): string {
  return formatPath(DEFAULT_VIDEO_PATH, { video_key: videoKey, chunk_index: slot.chunkIndex, file_index: slot.fileIndex });
}
