/**
 * A Parquet file written one row group at a time with hyparquet-writer, SNAPPY-compressed as
 * LeRobot's pyarrow writers do (`compression="snappy"`). Its size so far is known without asking
 * the file system, which is what the shard rollover rules need.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ParquetWriter, fileWriter, type ColumnSource, type KeyValue, type SchemaElement } from "hyparquet-writer";

export class ParquetFile {
  private readonly writer: ReturnType<typeof fileWriter>;
  private readonly parquet: ParquetWriter;
  private rowCount = 0;

  constructor(readonly path: string, schema: SchemaElement[], kvMetadata?: KeyValue[]) {
    mkdirSync(dirname(path), { recursive: true });
    this.writer = fileWriter(path);
    this.parquet = new ParquetWriter({ writer: this.writer, schema, codec: "SNAPPY", kvMetadata, createdBy: "assay lerobot export (hyparquet-writer)" });
  }

  /** Bytes written so far (the footer comes on `finish`). */
  get bytes(): number {
    return this.writer.offset;
  }

  get rows(): number {
    return this.rowCount;
  }

  /** Writes `rows` rows as one row group; every column of the schema must be given, in schema order. */
  async writeRowGroup(columns: ColumnSource[], rows: number): Promise<void> {
    for (const column of columns) {
      if (column.data.length !== rows) throw new Error(`${this.path}: column ${column.name} has ${column.data.length} values for ${rows} rows`);
    }
    await this.parquet.write({ columnData: columns, rowGroupSize: Math.max(rows, 1) });
    this.rowCount += rows;
  }

  /** Writes the footer and the last buffered bytes. */
  async finish(): Promise<void> {
    await this.parquet.finish();
  }
}
