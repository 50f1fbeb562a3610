/**
 * A split written as sharded TFRecord files, one record at a time.
 *
 * A TFRecord record (tensorflow/core/lib/io/record_writer.cc) is
 *   uint64 LE length | uint32 LE masked CRC-32C of those 8 bytes | data | uint32 LE masked CRC-32C of data
 * so each record costs 16 bytes beyond its data.
 *
 * Shards roll over by size: a record that would take the open shard past `shardSizeBytes` starts a new
 * one (a shard always holds at least one record, so one example larger than the limit gets a shard of
 * its own). The total number of shards is only known at the end, so shards are written as
 * `<prefix>-00000` (TFDS's SequentialWriter names them the same way) and `finish()` renames them to
 * TFDS's default `{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}`, e.g. `ds-train.tfrecord-00000-of-00003`.
 *
 * With `partBytes`, each shard is written as part files of whole records instead
 * (`<prefix>-00000.part-00000`, ...; a part is closed once it holds `partBytes` or more) and left
 * under those names: the shard is their concatenation, for an export archive that reads each part and
 * deletes it before the next (tar-archive.ts's `parts` entries), so that a shard and its copy in the
 * archive are not both on local disk whole.
 */
import type { FileHandle } from "node:fs/promises";
import { open, rename } from "node:fs/promises";
import { join } from "node:path";
import { crc32c, maskCrc32c, maskedCrc32c } from "./crc32c.js";
import type { ExamplePieces } from "./tf-example.js";

/** Bytes a record adds to its data: length, length CRC, data CRC. */
export const TFRECORD_OVERHEAD_BYTES = 16;

/** tensorflow_datasets/core/naming.py: DEFAULT_FILENAME_TEMPLATE, as written in dataset_info.json. */
export const TFDS_FILEPATH_TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}";

/** The final file name of a shard, as naming.py's ShardedFileTemplate renders it (at least 5 digits). */
export function shardFileName(dataset: string, split: string, fileFormat: string, index: number, count: number): string {
  const digits = Math.max(5, String(count).length);
  const pad = (n: number) => String(n).padStart(digits, "0");
  return `${dataset}-${split}.${fileFormat}-${pad(index)}-of-${pad(count)}`;
}

/**
 * The buffers of one record, written with one writev so the data is never copied: header, the data's
 * pieces, footer. The data's CRC runs over the pieces in order.
 */
export function tfRecordFrame(data: ExamplePieces): Uint8Array[] {
  const header = Buffer.alloc(12);
  header.writeBigUInt64LE(BigInt(data.byteLength), 0);
  header.writeUInt32LE(maskedCrc32c(header.subarray(0, 8)), 8);
  let crc = 0;
  for (const piece of data.pieces) crc = crc32c(piece, crc);
  const footer = Buffer.alloc(4);
  footer.writeUInt32LE(maskCrc32c(crc), 0);
  return [header, ...data.pieces, footer];
}

export interface WrittenSplit {
  /** Final shard file names, in order (with `partBytes`, the names the shards have in an archive). */
  fileNames: string[];
  /** Each shard's files under the folder, in order: its final name alone, or with `partBytes` its part files. */
  parts: string[][];
  /** Records in each shard (dataset_info.json `shardLengths`). */
  shardLengths: number[];
  /** Sum of the records' data bytes, without framing: what TFDS's writers record as a split's `numBytes`. */
  dataBytes: number;
}

export class ShardedTfRecordWriter {
  /** The shards so far: each one's name while written, its files and its records. */
  private readonly shards: Array<{ tempName: string; files: string[]; records: number }> = [];
  /** The open file (the last shard's, or its last part). */
  private handle: FileHandle | undefined;
  private fileBytes = 0;
  private shardBytes = 0;
  private dataBytes = 0;

  /**
   * @param dir folder the shards go in
   * @param naming dataset name, split and file format of the final file names
   * @param shardSizeBytes size at which a shard is closed and the next one started
   * @param partBytes write each shard as part files, each closed once it holds this many bytes (see
   *   above); undefined: one file per shard
   */
  constructor(
    private readonly dir: string,
    private readonly naming: { dataset: string; split: string; fileFormat: string },
    private readonly shardSizeBytes: number,
    private readonly partBytes?: number,
  ) {}

  /** Appends one record, starting a new shard first when this one would grow past the limit. */
  async write(data: ExamplePieces): Promise<void> {
    const recordBytes = data.byteLength + TFRECORD_OVERHEAD_BYTES;
    const shard = this.shards.at(-1);
    if (!shard || (shard.records > 0 && this.shardBytes + recordBytes > this.shardSizeBytes)) {
      await this.closeShard();
      this.startShard();
    } else if (this.handle && this.partBytes !== undefined && this.fileBytes >= this.partBytes) {
      await this.closeShard();
    }
    if (!this.handle) await this.openFile();
    const frame = tfRecordFrame(data);
    const { bytesWritten } = await this.handle!.writev(frame);
    if (bytesWritten !== recordBytes) throw new Error(`short write to ${this.shards.at(-1)!.files.at(-1)}: ${bytesWritten} of ${recordBytes} bytes`);
    this.fileBytes += recordBytes;
    this.shardBytes += recordBytes;
    this.shards.at(-1)!.records += 1;
    this.dataBytes += data.byteLength;
  }

  /** Closes the last file; without `partBytes`, renames every shard to its `-of-<count>` name. */
  async finish(): Promise<WrittenSplit> {
    await this.closeShard();
    const count = this.shards.length;
    const { dataset, split, fileFormat } = this.naming;
    const fileNames = this.shards.map((_, index) => shardFileName(dataset, split, fileFormat, index, count));
    if (this.partBytes === undefined) {
      for (let i = 0; i < count; i++) await rename(join(this.dir, this.shards[i].tempName), join(this.dir, fileNames[i]));
    }
    return {
      fileNames,
      parts: this.partBytes === undefined ? fileNames.map((name) => [name]) : this.shards.map((s) => [...s.files]),
      shardLengths: this.shards.map((s) => s.records),
      dataBytes: this.dataBytes,
    };
  }

  /** Closes the open file, if any (also for cleanup after a failure). */
  async closeShard(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }

  private startShard(): void {
    const { dataset, split, fileFormat } = this.naming;
    this.shards.push({ tempName: `${dataset}-${split}.${fileFormat}-${String(this.shards.length).padStart(5, "0")}`, files: [], records: 0 });
    this.shardBytes = 0;
  }

  private async openFile(): Promise<void> {
    const shard = this.shards.at(-1)!;
    const name = this.partBytes === undefined ? shard.tempName : `${shard.tempName}.part-${String(shard.files.length).padStart(5, "0")}`;
    this.handle = await open(join(this.dir, name), "wx");
    shard.files.push(name);
    this.fileBytes = 0;
  }
}
