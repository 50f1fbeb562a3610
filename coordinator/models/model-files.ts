/**
 * Where model bytes live: `<artifactsDir>/.models/<id>.onnx` once ready, `<id>.part` while an
 * upload is in progress. A chunk is written at its offset and fsynced before it is counted, so a
 * crash loses at most the chunk in flight, which the client sends again.
 */
import { createHash } from "node:crypto";
import { createReadStream, mkdirSync, rmSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";

export function modelsRoot(artifactsDir: string): string {
  return join(artifactsDir, ".models");
}

export function modelPath(artifactsDir: string, id: string): string {
  return join(modelsRoot(artifactsDir), `${id}.onnx`);
}

export function partPath(artifactsDir: string, id: string): string {
  return join(modelsRoot(artifactsDir), `${id}.part`);
}

export class ChunkTooLong extends Error {}

/**
 * Writes `body` into the part file from byte `offset`, at most `maxBytes`; returns the bytes
 * written (fsynced). Throws ChunkTooLong past `maxBytes`, or the stream's error if it breaks.
 */
export async function writeChunk(artifactsDir: string, id: string, offset: number, body: Readable, maxBytes: number): Promise<number> {
  mkdirSync(modelsRoot(artifactsDir), { recursive: true });
  const file = await open(partPath(artifactsDir, id), offset === 0 ? "w" : "r+");
  let written = 0;
  try {
    for await (const chunk of body) {
      const buffer = chunk as Buffer;
      if (written + buffer.length > maxBytes) throw new ChunkTooLong();
      await file.write(buffer, 0, buffer.length, offset + written);
      written += buffer.length;
    }
    await file.sync();
    return written;
  } finally {
    await file.close();
  }
}

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Cuts the part file back to `bytes` (an upload starting over, or a chunk that did not count). */
export async function truncatePart(artifactsDir: string, id: string, bytes: number): Promise<void> {
  const file = await open(partPath(artifactsDir, id), "r+").catch(() => undefined);
  if (!file) return;
  try {
    await file.truncate(bytes);
  } finally {
    await file.close();
  }
}

export async function promotePart(artifactsDir: string, id: string): Promise<void> {
  await rename(partPath(artifactsDir, id), modelPath(artifactsDir, id));
}

export function removeModelFiles(artifactsDir: string, id: string): void {
  rmSync(partPath(artifactsDir, id), { force: true });
  rmSync(modelPath(artifactsDir, id), { force: true });
}
