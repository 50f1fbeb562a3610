/**
 * Policy models on the cell: fetched from the coordinator over the CellLink FetchModel call the
 * first time an episode needs one, kept under `<dataDir>/models/<sha256>.onnx`, and checked by
 * hash on every load, so a model is downloaded once per cell however many episodes run it. A
 * broken download resumes from the end of its `.part` file. Two episodes asking at once share one
 * download.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { open, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Metadata } from "@grpc/grpc-js";
import type { CellLinkClient, ModelChunk } from "../../protocol/gen/cell.js";

export interface ModelRef {
  id: string;
  sha256: string;
  bytes: number;
}

export interface ModelCacheOptions {
  dir: string;
  /** The link's client and call metadata; absent until the link exists. */
  link: () => { client: CellLinkClient; metadata: Metadata } | undefined;
  log: (line: string) => void;
}

export class ModelCache {
  private readonly downloads = new Map<string, Promise<void>>();

  constructor(private readonly options: ModelCacheOptions) {
    mkdirSync(options.dir, { recursive: true });
  }

  private path(sha256: string): string {
    return join(this.options.dir, `${sha256}.onnx`);
  }

  /** The model's bytes, downloaded first if this cell does not hold them; checked against `ref.sha256`. */
  async load(ref: ModelRef): Promise<Uint8Array> {
    if (!/^[0-9a-f]{64}$/.test(ref.sha256)) throw new Error(`model ${ref.id}: sha256 ${JSON.stringify(ref.sha256)} is not 64 hex digits`);
    if (!existsSync(this.path(ref.sha256))) {
      let download = this.downloads.get(ref.sha256);
      if (!download) {
        download = this.download(ref).finally(() => this.downloads.delete(ref.sha256));
        this.downloads.set(ref.sha256, download);
      }
      await download;
    }
    const bytes = await readFile(this.path(ref.sha256));
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    if (sha256 !== ref.sha256) {
      await rm(this.path(ref.sha256), { force: true });
      throw new Error(`model ${ref.id}: the cached file hashes to ${sha256}, not ${ref.sha256}; it was removed and is fetched again next time`);
    }
    return bytes;
  }

  private async download(ref: ModelRef): Promise<void> {
    const link = this.options.link();
    if (!link) throw new Error(`model ${ref.id} is not on this cell and the coordinator link is not up to fetch it`);
    const part = join(this.options.dir, `${ref.sha256}.part`);
    const offset = existsSync(part) ? Math.min(statSync(part).size, ref.bytes) : 0;
    if (offset > 0) this.options.log(`model ${ref.id}: resuming its download at byte ${offset} of ${ref.bytes}`);
    const file = await open(part, offset > 0 ? "r+" : "w");
    const hash = createHash("sha256");
    try {
      if (offset > 0) {
        // The resumed bytes count towards the hash too.
        for await (const chunk of file.createReadStream({ start: 0, end: offset - 1, autoClose: false })) hash.update(chunk as Buffer);
      }
      let position = offset;
      const call = link.client.fetchModel({ modelId: ref.id, offset }, link.metadata);
      for await (const chunk of call as AsyncIterable<ModelChunk>) {
        if (chunk.sha256 !== ref.sha256 || Number(chunk.totalBytes) !== ref.bytes) {
          call.cancel();
          throw new Error(`model ${ref.id}: the coordinator serves sha256 ${chunk.sha256} (${chunk.totalBytes} bytes), not the pinned ${ref.sha256} (${ref.bytes} bytes)`);
        }
        if (Number(chunk.offset) !== position) throw new Error(`model ${ref.id}: chunk at ${chunk.offset}, expected ${position}`);
        await file.write(chunk.data, 0, chunk.data.length, position);
        hash.update(chunk.data);
        position += chunk.data.length;
      }
      if (position !== ref.bytes) throw new Error(`model ${ref.id}: the download ended at byte ${position} of ${ref.bytes}; it resumes from there next time`);
      await file.sync();
    } finally {
      await file.close();
    }
    const sha256 = hash.digest("hex");
    if (sha256 !== ref.sha256) {
      await rm(part, { force: true });
      throw new Error(`model ${ref.id}: the downloaded bytes hash to ${sha256}, not ${ref.sha256}; the partial file was removed`);
    }
    await rename(part, this.path(ref.sha256));
    this.options.log(`model ${ref.id}: ${ref.bytes} bytes fetched and verified`);
  }
}
