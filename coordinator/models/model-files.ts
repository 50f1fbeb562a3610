/**
 * Where model bytes live, in the artifact store: `.models/<id>.onnx` once ready. While an upload is
 * in progress, each chunk the API counted is an object of its own, `.models/<id>.parts/<first byte,
 * 12 digits>`, written whole or not at all: a PUT that breaks off leaves nothing, and no chunk
 * depends on one coordinator's disk. When the last one is counted they are read back in order,
 * checked and joined into the model (model-uploads.ts).
 */
import { createHash } from "node:crypto";
import { pipeline, Transform, type Readable } from "node:stream";
import type { ObjectStore } from "../storage/object-store.js";
import { readAll } from "../storage/object-readable.js";

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
 * The counted chunks joined, bytes 0 to `bytes`: each chunk starts where the one before ended (a
 * chunk stored but never counted, at another offset, is skipped). Throws naming the first byte no
 * chunk holds.
 */
export async function joinChunks(objects: ObjectStore, id: string, bytes: number): Promise<Buffer> {
  const chunks = new Map<number, string>();
  for (const entry of await objects.list(partsPrefix(id))) chunks.set(Number(entry.key.slice(partsPrefix(id).length)), entry.key);
  const pieces: Buffer[] = [];
  let position = 0;
  while (position < bytes) {
    const key = chunks.get(position);
    if (key === undefined) throw new Error(`model ${id}: no stored chunk starts at byte ${position}`);
    const piece = await readAll((await objects.get(key)).body);
    if (piece.length === 0) throw new Error(`model ${id}: the chunk at byte ${position} is empty`);
    pieces.push(piece);
    position += piece.length;
  }
  return Buffer.concat(pieces).subarray(0, bytes);
}

export function sha256Of(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Deletes a model's object and any chunks of its upload. */
export async function removeModelFiles(objects: ObjectStore, id: string): Promise<void> {
  await objects.delete(modelKey(id));
  await dropChunks(objects, id);
}
