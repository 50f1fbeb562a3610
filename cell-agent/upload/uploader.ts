/**
 * Uploads queued artifacts: ArtifactStatus(ref) → offset; UploadArtifact streams chunks from that
 * offset (`ref` on the first, `last` on the final one); `complete: true` → the local copy is deleted.
 * A transient failure (UNAVAILABLE, DEADLINE_EXCEEDED, a cut network, ...) stops the pass; it is
 * retried on the next kick (a Welcome, an Ack, a new artifact) or on a timer that backs off; after a
 * failover that is the new coordinator, asked afresh for its offset. No call waits forever on a
 * coordinator (or a network path) that stops answering without closing the connection: ArtifactStatus
 * has a deadline (`statusTimeoutMs`), and an upload that makes no progress for `stallMs` (no chunk
 * taken by the coordinator's flow control, or no answer after the last one) is cancelled and counts as
 * transient: a big file on a slow link is fine, a silent one is not. An
 * artifact the coordinator refuses for good (`artifact_unknown`: it never announced it, or
 * `artifact_not_yours`: the episode is another cell's, e.g. it was finished elsewhere) would be
 * refused on every pass: it is set aside (moved to `<dataDir>/rejected/`, never deleted) and the
 * pass carries on with the next file.
 */
import { existsSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { status, type Metadata, type ServiceError } from "@grpc/grpc-js";
import type { ArtifactProgress, ArtifactRef, CellLinkClient } from "../../protocol/gen/cell.js";
import { Backoff } from "../link/backoff.js";
import type { ArtifactStore, QueuedArtifact } from "./artifact-store.js";

export interface UploaderOptions {
  store: ArtifactStore;
  /** The current coordinator's client, read for every call (it changes when the link fails over). */
  client: () => CellLinkClient;
  metadata: () => Metadata;
  chunkBytes: number;
  /** Highest seq the coordinator acked; an artifact waits until its announcement is acked. */
  ackedSeq: () => number;
  /** Whether the Connect stream is up (uploads are not attempted otherwise). */
  linkUp: () => boolean;
  onBacklog: (count: number) => void;
  /** An artifact the coordinator refused for good was set aside (metrics). */
  onSetAside?: (artifact: QueuedArtifact, reason: RefusalReason | "file_missing") => void;
  log: (line: string) => void;
  /** Retry timer after a transient failure: from `initialMs` (default 2 s), doubling up to `maxMs` (default 60 s). */
  retry?: { initialMs?: number; maxMs?: number };
  /** Deadline of one ArtifactStatus call. Default 30000 ms. */
  statusTimeoutMs?: number;
  /**
   * An upload is cancelled (and retried from the coordinator's offset) after this long without progress: no
   * chunk accepted by the stream's flow control, or no answer after the last chunk. Default 60000 ms.
   */
  stallMs?: number;
}

export const DEFAULT_STATUS_TIMEOUT_MS = 30_000;
export const DEFAULT_UPLOAD_STALL_MS = 60_000;

/** The coordinator's reasons (coordinator/errors/link-errors.ts) that mean "this file will never be taken from this cell". */
const PERMANENT_REFUSALS = {
  artifact_unknown: status.NOT_FOUND,
  artifact_not_yours: status.PERMISSION_DENIED,
} as const;

export type RefusalReason = keyof typeof PERMANENT_REFUSALS;

/**
 * A queued artifact whose file is gone while the coordinator does not hold it: left by an agent
 * stopped between deleting an uploaded file and its sidecar, or by a disk fault. It can never be
 * uploaded; retrying would only block the files queued behind it.
 */
class MissingArtifactFile extends Error {}

/**
 * The reason when `error` is the coordinator refusing an artifact for good, else undefined
 * (transient: retry). The reason is read from the `assay-reason` trailer, or the details' prefix.
 */
export function permanentRefusal(error: unknown): RefusalReason | undefined {
  const e = error as Partial<ServiceError> | null;
  if (!e || typeof e.code !== "number") return undefined;
  const trailer = e.metadata?.get?.("assay-reason")?.[0];
  const reason = trailer !== undefined ? String(trailer) : /^([a-z_]+):/.exec(e.details ?? "")?.[1];
  if (reason && reason in PERMANENT_REFUSALS && PERMANENT_REFUSALS[reason as RefusalReason] === e.code) return reason as RefusalReason;
  return undefined;
}

export class Uploader {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly backoff: Backoff;
  private readonly statusTimeoutMs: number;
  private readonly stallMs: number;

  constructor(private readonly options: UploaderOptions) {
    this.backoff = new Backoff({ initialMs: options.retry?.initialMs ?? 2_000, maxMs: options.retry?.maxMs ?? 60_000, jitter: 0.2 });
    this.statusTimeoutMs = positiveMs("statusTimeoutMs", options.statusTimeoutMs ?? DEFAULT_STATUS_TIMEOUT_MS);
    this.stallMs = positiveMs("stallMs", options.stallMs ?? DEFAULT_UPLOAD_STALL_MS);
  }

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
        this.backoff.reset();
        this.options.onBacklog((await this.options.store.list()).length);
      } catch (error) {
        if (error instanceof MissingArtifactFile) {
          const parked = await this.setAsideMissing(artifact, error.message).then(() => true, () => false);
          if (parked) continue;
        }
        const refusal = permanentRefusal(error);
        if (refusal) {
          const parked = await this.setAside(artifact, refusal, error as ServiceError).then(() => true, (failure: Error) => {
            this.options.log(`could not set ${artifact.ref.fileName} aside (${failure.message}); it stays queued`);
            return false;
          });
          if (parked) continue;
        }
        const delayMs = this.backoff.nextDelayMs();
        this.options.log(
          `upload of ${artifact.ref.fileName} stopped (${(error as Error).message}); will resume from the coordinator's offset (next try in ${(delayMs / 1000).toFixed(1)} s or when the link comes back)`,
        );
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => this.kick(), delayMs);
        return;
      }
    }
  }

  /** Parks a refused artifact in `rejected/` so the files after it still upload. */
  private async setAside(artifact: QueuedArtifact, reason: RefusalReason, error: ServiceError): Promise<void> {
    const { ref } = artifact;
    const why = error.details || error.message;
    const kept = await this.options.store.setAside(artifact, why.startsWith(`${reason}:`) ? why : `${reason}: ${why}`);
    this.options.log(
      `the coordinator will not take ${ref.fileName} (${ref.kind} of episode ${ref.episodeId}): ${why}. ` +
        `It was moved, not deleted, to ${kept}; this cell's other recordings keep uploading`,
    );
    this.options.onSetAside?.(artifact, reason);
    this.options.onBacklog((await this.options.store.list()).length);
  }

  /** Moves the sidecar of a file that is gone to `rejected/`, saying so, so the queue moves on. */
  private async setAsideMissing(artifact: QueuedArtifact, why: string): Promise<void> {
    const kept = await this.options.store.setAside(artifact, `file_missing: ${why}`);
    this.options.log(`${artifact.ref.fileName} (${artifact.ref.kind} of episode ${artifact.ref.episodeId}) cannot be uploaded: ${why}. Its record was moved to ${kept}.json`);
    this.options.onSetAside?.(artifact, "file_missing");
    this.options.onBacklog((await this.options.store.list()).length);
  }

  private status(client: CellLinkClient, ref: ArtifactRef): Promise<ArtifactProgress> {
    return new Promise((resolve, reject) => {
      client.artifactStatus(ref, this.options.metadata(), { deadline: Date.now() + this.statusTimeoutMs }, (error: ServiceError | null, progress: ArtifactProgress) =>
        error ? reject(error) : resolve(progress));
    });
  }

  private async upload(artifact: QueuedArtifact): Promise<void> {
    const { ref } = artifact;
    // One coordinator for the whole file: the offset it reports is the one it continues from.
    const client = this.options.client();
    const progress = await this.status(client, ref);
    if (progress.complete) return;
    if (!existsSync(artifact.path)) {
      throw new MissingArtifactFile(`the file is no longer in the outbox and the coordinator holds ${progress.receivedBytes} of its ${ref.bytes} bytes`);
    }
    const offset = progress.receivedBytes <= ref.bytes ? progress.receivedBytes : 0;
    const file = await open(artifact.path, "r");
    try {
      const result = await this.stream(client, artifact, file, offset);
      if (!result.complete) {
        throw new Error(`the coordinator holds ${result.receivedBytes} of ${ref.bytes} bytes but did not confirm the file`);
      }
    } finally {
      await file.close();
    }
  }

  /**
   * One UploadArtifact call from `offset`: chunks are written as the stream's flow control takes them. The call
   * settles once: with the coordinator's answer, its error, or a stall (nothing taken, or no answer after the last
   * chunk, for `stallMs`: the call is cancelled). However it settles, the write loop stops: it never waits for a
   * 'drain' that a cancelled or failed call will not emit.
   */
  private stream(client: CellLinkClient, artifact: QueuedArtifact, file: FileHandle, offset: number): Promise<ArtifactProgress> {
    const { ref } = artifact;
    return new Promise<ArtifactProgress>((resolve, reject) => {
      let settled = false;
      let wakeWriter: (() => void) | undefined;
      let stallTimer: NodeJS.Timeout | undefined;
      const settle = (error: Error | null, progress?: ArtifactProgress) => {
        if (settled) return;
        settled = true;
        clearTimeout(stallTimer);
        wakeWriter?.();
        if (error) reject(error);
        else resolve(progress!);
      };
      const call = client.uploadArtifact(this.options.metadata(), (error: ServiceError | null, response: ArtifactProgress) => settle(error, response));
      call.on("error", (error: Error) => settle(error));
      let position = offset;
      const progressed = () => {
        clearTimeout(stallTimer);
        stallTimer = setTimeout(() => {
          settle(new Error(
            `no progress for ${(this.stallMs / 1000).toFixed(1)} s at byte ${position} of ${ref.bytes} (the coordinator or the network stopped taking the stream); cancelled`,
          ));
          call.cancel();
        }, this.stallMs);
      };
      progressed();
      void (async () => {
        try {
          let first = true;
          while (!settled && !this.stopped) {
            const length = Math.min(this.options.chunkBytes, ref.bytes - position);
            const data = Buffer.alloc(length);
            if (length > 0) await file.read(data, 0, length, position);
            if (settled) return;
            const last = position + length >= ref.bytes;
            const ok = call.write({ ref: first ? ref : undefined, offset: position, data, last });
            first = false;
            position += length;
            if (!ok) {
              await new Promise<void>((wake) => {
                wakeWriter = wake;
                call.once("drain", wake);
              });
              call.removeListener("drain", wakeWriter!);
              wakeWriter = undefined;
            }
            if (settled) return;
            progressed();
            if (last) break;
          }
          if (!settled) call.end();
        } catch (error) {
          settle(error as Error);
          call.cancel();
        }
      })();
    });
  }
}

function positiveMs(name: string, value: number): number {
  if (!(Number.isFinite(value) && value > 0)) throw new Error(`uploader option ${name} must be a positive number of milliseconds; got ${value}`);
  return value;
}
