/**
 * Where model bytes live, in the artifact store: `.models/<id>.onnx` once ready. While an upload is
 * in progress, each chunk the API counted is an object of its own, `.models/<id>.parts/<first byte,
 * 12 digits>`, written whole or not at all: a PUT that breaks off leaves nothing, and no chunk
 * depends on one coordinator's disk. When the last one is counted they are streamed back in order
 * into the model's object, hashed on the way (model-uploads.ts): no file is ever held whole in
 * memory, whatever its size.
 */
import { createHash, type Hash } from "node:crypto";
import { pipeline, Transform, type Readable } from "node:stream";
import type { ObjectStore } from "../storage/object-store.js";

export const MODEL_CONTENT_TYPE = "application/octet-stream";

/** The ready model's object. */
export function modelKey(id: string): string {
  return `.models/${id}.onnx`;
}

function partsPrefix(id: string): string {
  return `.models/${id}.parts/`;
}

function partKey(id: string, first: number): string {
  return `${partsPrefix(id)}${String(first).padStart(12, "0")}`;
}

export class ChunkTooLong extends Error {}

/**
 * Stores `body` as the chunk that starts at byte `first`, at most `maxBytes`; returns the bytes
 * stored. Throws ChunkTooLong past `maxBytes`, or the stream's error if it breaks (nothing is
 * stored then).
 */
export async function writeChunk(objects: ObjectStore, id: string, first: number, body: Readable, maxBytes: number): Promise<number> {
  let written = 0;
  let tooLong = false;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      written += chunk.length;
      if (written > maxBytes) {
        tooLong = true;
        done(new ChunkTooLong());
      } else done(null, chunk);
    },
  });
  try {
    await objects.put(partKey(id, first), pipeline(body, counter, () => undefined));
  } catch (error) {
    throw tooLong ? new ChunkTooLong() : error;
  }
  return written;
}

/** Forgets the chunk that starts at `first` (stored, but not counted). */
export async function dropChunk(objects: ObjectStore, id: string, first: number): Promise<void> {
  await objects.delete(partKey(id, first));
}

/** Forgets every chunk (an upload starting over from byte 0). */
export async function dropChunks(objects: ObjectStore, id: string): Promise<void> {
  await objects.deletePrefix(partsPrefix(id));
}

/**
 * The counted chunks as one stream of bytes 0 to `bytes`, each chunk starting where the one before
 * ended (a chunk stored but never counted, at another offset, is skipped), fed to `hash` as they
 * pass. The stream fails naming the first byte no chunk holds.
 */
export async function* joinedChunks(objects: ObjectStore, id: string, bytes: number, hash: Hash): AsyncGenerator<Buffer> {
  const chunks = new Map<number, { key: string; bytes: number }>();
  for (const entry of await objects.list(partsPrefix(id))) chunks.set(Number(entry.key.slice(partsPrefix(id).length)), entry);
  let position = 0;
  while (position < bytes) {
    const chunk = chunks.get(position);
    if (chunk === undefined) throw new Error(`model ${id}: no stored chunk starts at byte ${position}`);
    if (chunk.bytes === 0) throw new Error(`model ${id}: the chunk at byte ${position} is empty`);
    const take = Math.min(chunk.bytes, bytes - position);
    let read = 0;
    const { body } = await objects.get(chunk.key, take < chunk.bytes ? { start: 0, end: take - 1 } : undefined);
    for await (const piece of body as AsyncIterable<Buffer>) {
      hash.update(piece);
      read += piece.length;
      yield piece;
    }
    if (read !== take) throw new Error(`model ${id}: the chunk at byte ${position} read back ${read} bytes, not ${take}`);
    position += take;
  }
}

/** Deletes a model's object and any chunks of its upload. */
export async function removeModelFiles(objects: ObjectStore, id: string): Promise<void> {
  await objects.delete(modelKey(id));
  await dropChunks(objects, id);
}
