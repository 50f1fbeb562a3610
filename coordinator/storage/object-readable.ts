/**
 * Random-access reads of a stored object, one ranged `get` per read: the shape @mcap/core's indexed
 * reader takes (`IReadable`), so a recording is read where it is stored, without a local copy. The
 * indexed reader asks for the footer, the summary, then whole chunks, so a read is a few requests
 * per chunk it needs, never one per message.
 */
import type { Readable } from "node:stream";
import type { ObjectStore } from "./object-store.js";

export interface RandomReadable {
  size(): Promise<bigint>;
  read(offset: bigint, size: bigint): Promise<Uint8Array>;
}

/** Reads of `key`, whose size (`bytes`) the caller knows from its row. */
export function objectReadable(objects: ObjectStore, key: string, bytes: number): RandomReadable {
  return {
    size: async () => BigInt(bytes),
    read: async (offset, size) => {
      if (size === 0n) return new Uint8Array();
      const got = await objects.get(key, { start: Number(offset), end: Number(offset + size) - 1 });
      const data = await readAll(got.body);
      if (data.length !== Number(size)) throw new Error(`${key} gave ${data.length} bytes from byte ${offset}; the reader wanted ${size}`);
      return data;
    },
  };
}

/** The whole of a stream, in memory. */
export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}
