/**
 * The frame table, `data/chunk-XXX/file-YYY.parquet`: one row per control step with the columns
 * LeRobot's Hugging Face features give (`action` and `observation.state` as lists of float32, then
 * `timestamp` float32 and `frame_index`, `episode_index`, `index`, `task_index` int64), one row
 * group per episode, and a new file when the next episode would push the current one past
 * `dataFileSizeMb` at its bytes per frame so far, as `_save_episode_data` decides.
 */
import { join } from "node:path";
import type { ColumnSource } from "hyparquet-writer";
import { BYTES_PER_MB, FIRST_SLOT, dataFilePath, nextSlot, type FileSlot } from "./lerobot-layout.js";
import { FLOAT, INT64, fileSchema, listColumn, scalarColumn } from "./parquet-columns.js";
import { ParquetFile } from "./parquet-file.js";

export interface DataLimits {
  dataFileSizeMb: number;
  chunksSize: number;
}

/** One episode's rows, column by column. */
export interface EpisodeRows {
  /** Per step, one float32 per joint. */
  action: number[][];
  state: number[][];
  timestampS: Float32Array;
  frameIndex: BigInt64Array;
  episodeIndex: BigInt64Array;
  index: BigInt64Array;
  taskIndex: BigInt64Array;
}

const SCHEMA = fileSchema([
  listColumn("action", FLOAT),
  listColumn("observation.state", FLOAT),
  scalarColumn("timestamp", FLOAT),
  scalarColumn("frame_index", INT64),
  scalarColumn("episode_index", INT64),
  scalarColumn("index", INT64),
  scalarColumn("task_index", INT64),
]);

export class DataFileWriter {
  private file: ParquetFile | undefined;
  private slot: FileSlot = FIRST_SLOT;
  readonly files: string[] = [];

  constructor(private readonly root: string, private readonly limits: DataLimits) {}

  /** Appends an episode's rows and returns the file that holds them. */
  async writeEpisode(rows: EpisodeRows): Promise<FileSlot> {
    const frames = rows.action.length;
    if (this.file && this.file.rows > 0) {
      const sizeMb = this.file.bytes / BYTES_PER_MB;
      if (sizeMb + (sizeMb / this.file.rows) * frames >= this.limits.dataFileSizeMb) {
        await this.file.finish();
        this.file = undefined;
        this.slot = nextSlot(this.slot, this.limits.chunksSize);
      }
    }
    if (!this.file) {
      const relative = dataFilePath(this.slot);
      this.file = new ParquetFile(join(this.root, relative), SCHEMA);
      this.files.push(relative);
    }
    const columns: ColumnSource[] = [
      { name: "action", data: rows.action },
      { name: "observation.state", data: rows.state },
      { name: "timestamp", data: rows.timestampS },
      { name: "frame_index", data: rows.frameIndex },
      { name: "episode_index", data: rows.episodeIndex },
      { name: "index", data: rows.index },
      { name: "task_index", data: rows.taskIndex },
    ];
    await this.file.writeRowGroup(columns, frames);
    return this.slot;
  }

  /** Finishes the open file. */
  async close(): Promise<void> {
    await this.file?.finish();
    this.file = undefined;
  }
}
