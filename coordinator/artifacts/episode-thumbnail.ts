/**
 * Episode thumbnails: a still of one camera taken from the episode's MCAP (the camera's last frame by
 * default, how the episode ended; or its first), scaled down to `widthPx` wide as a JPEG. The frame
 * is read where the recording is stored (one or two ranged reads of the chunk that holds it, the
 * MCAP's index says which); no video is decoded.
 *
 * Cached in memory, bounded: at most `maxEntries` thumbnails (least recently used dropped first),
 * keyed by the recording's SHA-256, the camera and first/last, so a stored recording (which never
 * changes) is read once however often the failure grid is opened. docs/api.md, "Episode media".
 */
import type { McapIndexedReader } from "@mcap/core";
import { cameraNameOf, cameraTopic } from "../../protocol/recording/recording-layout.js";
import { cameraJpeg, openRecordingReader } from "../../protocol/recording/recording-reader.js";
import { loadSharp } from "../../protocol/image/load-sharp.js";
import type { RandomReadable } from "../storage/object-readable.js";

export interface ThumbnailOptions {
  /** Thumbnails kept in memory. Default 256 (about 5 MB at the default width). */
  maxEntries?: number;
  /** Width of a thumbnail, px (never scaled up). Default 320. */
  widthPx?: number;
}

export type CompiledThumbnailOptions = Required<ThumbnailOptions>;

export function compileThumbnailOptions(options: ThumbnailOptions = {}): CompiledThumbnailOptions {
  const known = new Set(["maxEntries", "widthPx"]);
  for (const key of Object.keys(options)) if (!known.has(key)) throw new Error(`thumbnail option ${JSON.stringify(key)} is not known (known: ${[...known].join(", ")})`);
  const compiled = { maxEntries: options.maxEntries ?? 256, widthPx: options.widthPx ?? 320 };
  if (!Number.isInteger(compiled.maxEntries) || compiled.maxEntries < 1) throw new Error(`thumbnail maxEntries must be a positive integer; got ${compiled.maxEntries}`);
  if (!Number.isInteger(compiled.widthPx) || compiled.widthPx < 16 || compiled.widthPx > 1920) throw new Error(`thumbnail widthPx must be an integer from 16 to 1920; got ${compiled.widthPx}`);
  return compiled;
}

/** What a thumbnail is asked of. */
export interface ThumbnailRequest {
  /** The recording's SHA-256 (the cache key: a stored recording never changes). */
  sha256: string;
  readable: RandomReadable;
  /** The camera; undefined: `top` if recorded, else the first camera. */
  camera?: string;
  at: "first" | "last";
}

/** A thumbnail, or why there is none (the caller answers 404 with it). */
export type ThumbnailAnswer = { jpeg: Buffer; camera: string } | { missing: string };

/** The cameras recorded in an MCAP (`/camera/<name>` channels), in channel order. */
function camerasOf(reader: McapIndexedReader): Map<string, number> {
  return new Map([...reader.channelsById.values()].filter((c) => cameraNameOf(c.topic) !== null).map((c) => [cameraNameOf(c.topic)!, c.id]));
}

export class EpisodeThumbnails {
  private readonly options: CompiledThumbnailOptions;
  private readonly cache = new Map<string, { jpeg: Buffer; camera: string }>();

  constructor(options: ThumbnailOptions = {}) {
    this.options = compileThumbnailOptions(options);
  }

  async thumbnail(request: ThumbnailRequest): Promise<ThumbnailAnswer> {
    const key = `${request.sha256}:${request.camera ?? ""}:${request.at}`;
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const reader = await openRecordingReader(request.readable);
    const cameras = camerasOf(reader);
    const camera = request.camera ?? (cameras.has("top") ? "top" : [...cameras.keys()][0]);
    if (camera === undefined) return { missing: "the recording has no camera channel" };
    if (!cameras.has(camera)) return { missing: `the recording has no camera ${JSON.stringify(camera.slice(0, 64))} (it has ${[...cameras.keys()].join(", ")})` };
    let frame: Buffer | undefined;
    const encoding = [...reader.channelsById.values()].find((c) => c.topic === cameraTopic(camera))!.messageEncoding;
    for await (const message of reader.readMessages({ topics: [cameraTopic(camera)], reverse: request.at === "last", validateCrcs: false })) {
      // Either layout: protobuf foxglove.CompressedImage, or JSON with the JPEG in base64 (recordings before it).
      frame = Buffer.from(cameraJpeg(encoding, message.data));
      break;
    }
    if (!frame || frame.length === 0) return { missing: `camera ${camera} recorded no frame` };
    const sharp = await loadSharp();
    const jpeg = await sharp(frame).resize({ width: this.options.widthPx, withoutEnlargement: true }).jpeg({ quality: 70 }).toBuffer();
    const answer = { jpeg, camera };
    this.cache.set(key, answer);
    if (this.cache.size > this.options.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
    return answer;
  }
}
