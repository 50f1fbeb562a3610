/**
 * @mcap/core's IWritable over a Node FileHandle (there is no @mcap/nodejs here), plus the matching
 * IReadable used to read recordings back.
 */
import type { FileHandle } from "node:fs/promises";
import type { IReadable, IWritable } from "@mcap/core";

export class FileHandleWritable implements IWritable {
  private offset = 0n;

  constructor(private readonly handle: FileHandle) {}

  async write(buffer: Uint8Array): Promise<void> {
    // NOTE: McapWriter reuses `buffer` after this resolves, so the whole buffer must be written here.
    let written = 0;
    while (written < buffer.byteLength) {
      const { bytesWritten } = await this.handle.write(buffer, written, buffer.byteLength - written);
      written += bytesWritten;
    }
    this.offset += BigInt(buffer.byteLength);
  }

  /** Several buffers in one system call (a chunk's head, records and indexes); the rest, if it came short, by `write`. */
  async writev(parts: readonly Uint8Array[]): Promise<void> {
    let { bytesWritten } = await this.handle.writev(parts as Uint8Array[]);
    this.offset += BigInt(bytesWritten);
    for (const part of parts) {
      if (bytesWritten >= part.byteLength) {
        bytesWritten -= part.byteLength;
        continue;
      }
      await this.write(part.subarray(bytesWritten));
      bytesWritten = 0;
    }
  }

  position(): bigint {
    return this.offset;
  }
}

export class FileHandleReadable implements IReadable {
  constructor(private readonly handle: FileHandle) {}

  async size(): Promise<bigint> {
    return BigInt((await this.handle.stat()).size);
  }

  async read(offset: bigint, size: bigint): Promise<Uint8Array> {
    const buffer = new Uint8Array(Number(size));
    let done = 0;
    while (done < buffer.byteLength) {
      const { bytesRead } = await this.handle.read(buffer, done, buffer.byteLength - done, Number(offset) + done);
      if (bytesRead === 0) throw new Error(`short read at ${Number(offset) + done} of a ${buffer.byteLength}-byte request`);
      done += bytesRead;
    }
    return buffer;
  }
}
