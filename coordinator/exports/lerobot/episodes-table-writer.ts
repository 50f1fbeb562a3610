/**
 * The episode table, `meta/episodes/chunk-XXX/file-YYY.parquet`: one row per episode with the
 * columns LeRobot's `save_episode` writes (`episode_index`, `tasks`, `length`, where its rows and
 * frames are, `stats/<feature>/<stat>`, its own `meta/episodes/*` place), then Assay's `assay/*`
 * columns. Like `_save_episode_metadata`, rows are flushed ten at a time, and once the current
 * file holds flushed rows the next row opens a new file if it would push it past
 * `dataFileSizeMb`.
 */
import { join } from "node:path";
import type { ColumnSource, SchemaElement } from "hyparquet-writer";
import type { ExportEpisode } from "../export-input.js";
import { STAT_KEYS } from "./feature-stats.js";
import { BYTES_PER_MB, FIRST_SLOT, episodesFilePath, nextSlot, type FileSlot } from "./lerobot-layout.js";
import { BOOLEAN, DOUBLE, INT64, STRING, fileSchema, listColumn, scalarColumn } from "./parquet-columns.js";
import { ParquetFile } from "./parquet-file.js";
import { statValue, type NamedStats } from "./stats-layout.js";

/** `metadata_buffer_size` of `LeRobotDatasetMetadata`. */
const ROWS_PER_FLUSH = 10;

/** Assay's own columns of an episode (`assay/<snake_case name>`). */
export interface AssayEpisodeColumns {
  episode_id: string;
  run_episode_index: number;
  outcome: string;
  policy_succeeded: boolean;
  intervened: boolean;
  failure_cluster: string | null;
  /** JSON text, or null when the episode has no replay spec. */
  replay_spec: string | null;
  cell_id: string | null;
  seed: number;
  robot: string;
  environment: string;
  task: string;
}

/** An episode's `assay/*` columns from its export record. */
export function assayColumnsOf(episode: ExportEpisode): AssayEpisodeColumns {
  return {
    episode_id: episode.episodeId,
    run_episode_index: episode.index,
    outcome: episode.outcome,
    policy_succeeded: episode.policySucceeded,
    intervened: episode.intervened,
    failure_cluster: episode.failureCluster,
    replay_spec: episode.replaySpec === null ? null : JSON.stringify(episode.replaySpec),
    cell_id: episode.cellId,
    seed: episode.seed,
    robot: episode.robot,
    environment: episode.environment,
    task: episode.task,
  };
}

export interface EpisodeRecord {
  episodeIndex: number;
  tasks: string[];
  length: number;
  data: FileSlot;
  datasetFromIndex: number;
  datasetToIndex: number;
  videos: Map<string, { slot: FileSlot; fromTimestampS: number; toTimestampS: number }>;
  /** Every feature's statistics over the episode, in feature order. */
  stats: Map<string, NamedStats>;
  assay: AssayEpisodeColumns;
}

interface Column {
  schema: SchemaElement[];
  value: (record: EpisodeRecord, place: FileSlot) => unknown;
}

const int = (value: number) => BigInt(value);

const ASSAY_COLUMNS: Array<[keyof AssayEpisodeColumns, typeof STRING]> = [
  ["episode_id", STRING], ["run_episode_index", INT64], ["outcome", STRING], ["policy_succeeded", BOOLEAN], ["intervened", BOOLEAN],
  ["failure_cluster", STRING], ["replay_spec", STRING], ["cell_id", STRING], ["seed", INT64], ["robot", STRING], ["environment", STRING], ["task", STRING],
];

function columnsFor(videoKeys: string[], statsFeatures: Array<{ name: string; isImage: boolean }>): Array<[string, Column]> {
  const columns: Array<[string, Column]> = [];
  const add = (name: string, schema: SchemaElement[], value: Column["value"]) => columns.push([name, { schema, value }]);
  add("episode_index", scalarColumn("episode_index", INT64), (r) => int(r.episodeIndex));
  add("tasks", listColumn("tasks", STRING), (r) => r.tasks);
  add("length", scalarColumn("length", INT64), (r) => int(r.length));
  add("data/chunk_index", scalarColumn("data/chunk_index", INT64), (r) => int(r.data.chunkIndex));
  add("data/file_index", scalarColumn("data/file_index", INT64), (r) => int(r.data.fileIndex));
  add("dataset_from_index", scalarColumn("dataset_from_index", INT64), (r) => int(r.datasetFromIndex));
  add("dataset_to_index", scalarColumn("dataset_to_index", INT64), (r) => int(r.datasetToIndex));
  for (const key of videoKeys) {
    const video = (r: EpisodeRecord) => r.videos.get(key)!;
    add(`videos/${key}/chunk_index`, scalarColumn(`videos/${key}/chunk_index`, INT64), (r) => int(video(r).slot.chunkIndex));
    add(`videos/${key}/file_index`, scalarColumn(`videos/${key}/file_index`, INT64), (r) => int(video(r).slot.fileIndex));
    add(`videos/${key}/from_timestamp`, scalarColumn(`videos/${key}/from_timestamp`, DOUBLE), (r) => video(r).fromTimestampS);
    add(`videos/${key}/to_timestamp`, scalarColumn(`videos/${key}/to_timestamp`, DOUBLE), (r) => video(r).toTimestampS);
  }
  for (const { name, isImage } of statsFeatures) {
    for (const stat of STAT_KEYS) {
      const column = `stats/${name}/${stat}`;
      const schema = stat === "count" ? listColumn(column, INT64) : listColumn(column, DOUBLE, isImage ? 3 : 1);
      add(column, schema, (r) => {
        const value = statValue(r.stats.get(name)!, stat);
        return stat === "count" ? (value as number[]).map(int) : value;
      });
    }
  }
  add("meta/episodes/chunk_index", scalarColumn("meta/episodes/chunk_index", INT64), (_, place) => int(place.chunkIndex));
  add("meta/episodes/file_index", scalarColumn("meta/episodes/file_index", INT64), (_, place) => int(place.fileIndex));
  for (const [name, leaf] of ASSAY_COLUMNS) {
    add(`assay/${name}`, scalarColumn(`assay/${name}`, leaf), (r) => (leaf === INT64 ? int(r.assay[name] as number) : r.assay[name]));
  }
  return columns;
}

export class EpisodesTableWriter {
  private readonly columns: Array<[string, Column]>;
  private readonly schema: SchemaElement[];
  private file: ParquetFile | undefined;
  private slot: FileSlot = FIRST_SLOT;
  private pending: EpisodeRecord[] = [];
  readonly files: string[] = [];

  constructor(
    private readonly root: string,
    videoKeys: string[],
    statsFeatures: Array<{ name: string; isImage: boolean }>,
    private readonly limits: { dataFileSizeMb: number; chunksSize: number },
  ) {
    this.columns = columnsFor(videoKeys, statsFeatures);
    this.schema = fileSchema(this.columns.map(([, column]) => column.schema));
  }

  /** Adds the next episode's row (episodes in order). */
  async add(record: EpisodeRecord): Promise<void> {
    if (this.file && this.file.rows > 0) {
      const sizeMb = this.file.bytes / BYTES_PER_MB;
      if (sizeMb + sizeMb / this.file.rows >= this.limits.dataFileSizeMb) {
        await this.flush();
        await this.file.finish();
        this.file = undefined;
        this.slot = nextSlot(this.slot, this.limits.chunksSize);
      }
    }
    if (!this.file) {
      const relative = episodesFilePath(this.slot);
      this.file = new ParquetFile(join(this.root, relative), this.schema);
      this.files.push(relative);
    }
    this.pending.push(record);
    if (this.pending.length >= ROWS_PER_FLUSH) await this.flush();
  }

  /** Writes the buffered rows and finishes the file. */
  async close(): Promise<void> {
    await this.flush();
    await this.file?.finish();
    this.file = undefined;
  }

  private async flush(): Promise<void> {
    if (!this.file || this.pending.length === 0) return;
    const rows = this.pending;
    this.pending = [];
    const data: ColumnSource[] = this.columns.map(([name, column]) => ({ name, data: rows.map((r) => column.value(r, this.slot)) }));
    await this.file.writeRowGroup(data, rows.length);
  }
}
