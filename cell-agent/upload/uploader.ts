/**
 * Uploads queued artifacts: ArtifactStatus(ref) → offset; UploadArtifact streams chunks from that
 * offset (`ref` on the first, `last` on the final one); `complete: true` → the local copy is deleted.
 * A failed pass stops and is retried on the next kick (a Welcome, an Ack, a new artifact) or timer.
 */
import { open } from "node:fs/promises";
import type { Metadata, ServiceError } from "@grpc/grpc-js";
import type { ArtifactProgress, ArtifactRef, CellLinkClient } from "../../protocol/gen/cell.js";
import type { ArtifactStore, QueuedArtifact } from "./artifact-store.js";

export interface UploaderOptions {
  store: ArtifactStore;
  client: CellLinkClient;
  metadata: () => Metadata;
  chunkBytes: number;
  /** Highest seq the coordinator acked; an artifact waits until its announcement is acked. */
  ackedSeq: () => number;
  /** Whether the Connect stream is up (uploads are not attempted otherwise). */
  linkUp: () => boolean;
  onBacklog: (count: number) => void;
  log: (line: string) => void;
}

const RETRY_MS = 2_000;

export class Uploader {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: UploaderOptions) {}

  /** Starts an upload pass, or queues one more after the current pass. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** Resolves when no pass is running (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
  }

  private async pass(): Promise<void> {
    const queued = await this.options.store.list();
    this.options.onBacklog(queued.length);
    for (const artifact of queued) {
      if (this.stopped || !this.options.linkUp()) return;
      if (artifact.announcedSeq > this.options.ackedSeq()) continue;
      try {
        await this.upload(artifact);
        await this.options.store.remove(artifact);
        this.options.onBacklog((await this.options.store.list()).length);
      } catch (error) {
        this.options.log(`upload of ${artifact.ref.fileName} stopped (${(error as Error).message}); will resume from the coordinator's offset`);
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => this.kick(), RETRY_MS);
        return;
      }
    }
  }

  private status(ref: ArtifactRef): Promise<ArtifactProgress> {
    return new Promise((resolve, reject) => {
      this.options.client.artifactStatus(ref, this.options.metadata(), (error: ServiceError | null, progress: ArtifactProgress) =>
        error ? reject(error) : resolve(progress));
    });
  }

  private async upload(artifact: QueuedArtifact): Promise<void> {
    const { ref } = artifact;
    const progress = await this.status(ref);
    if (progress.complete) return;
    const offset = progress.receivedBytes <= ref.bytes ? progress.receivedBytes : 0;
    const file = await open(artifact.path, "r");
    try {
      const result = await new Promise<ArtifactProgress>(async (resolve, reject) => {
        const call = this.options.client.uploadArtifact(this.options.metadata(), (error: ServiceError | null, response: ArtifactProgress) =>
          error ? reject(error) : resolve(response));
        call.on("error", reject);
        try {
          let position = offset;
          let first = true;
          do {
            const length = Math.min(this.options.chunkBytes, ref.bytes - position);
            const data = Buffer.alloc(length);
            if (length > 0) await file.read(data, 0, length, position);
            const last = position + length >= ref.bytes;
            const ok = call.write({ ref: first ? ref : undefined, offset: position, data, last });
            first = false;
            position += length;
            if (!ok) await new Promise<void>((drained) => call.once("drain", drained));
            if (last) break;
          } while (!this.stopped);
          call.end();
        } catch (error) {
          call.cancel();
          reject(error as Error);
        }
      });
      if (!result.complete) {
        throw new Error(`the coordinator holds ${result.receivedBytes} of ${ref.bytes} bytes but did not confirm the file`);
      }
    } finally {
      await file.close();
    }
  }
}
