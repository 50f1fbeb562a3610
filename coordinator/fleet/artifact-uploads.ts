/**
 * The CellLink artifact calls. ArtifactStatus says how many bytes of an artifact are already
 * held; UploadArtifact appends chunks from exactly that offset and, on the chunk marked `last`,
 * verifies the whole file against the artifacts row EpisodeFinished announced and stores it
 * (coordinator/artifacts/artifact-store.ts). An artifact found complete in the object store while
 * its row is pending (stored by a coordinator that stopped before recording it) is recorded then
 * and answered complete, so the cell does not send it again.
 *
 * A stored MCAP of a verify scenario episode with `return_ground_truth` first yields its ground-truth
 * file (coordinator/artifacts/ground-truth.ts); the MCAP row turns `stored` together with the
 * ground-truth row, so the run cannot complete before its ground truth exists.
 */
import type { sendUnaryData, ServerReadableStream, ServerUnaryCall } from "@grpc/grpc-js";
import type { ArtifactChunk, ArtifactProgress, ArtifactRef } from "../../protocol/gen/cell.js";
import { artifactKey, type ArtifactUpload, type StoredArtifactRef } from "../artifacts/artifact-store.js";
import { deriveGroundTruth, groundTruthFileName } from "../artifacts/ground-truth.js";
import { authenticateCell } from "./enrollment.js";
import { metadataValue } from "./connect-session.js";
import type { LinkContext } from "./link-context.js";
import { LinkError, toGrpcStatus } from "../errors/link-errors.js";
import { groundTruthScenarioOf } from "../kinds/verify.js";
import { objectReadable } from "../storage/object-readable.js";
import { getArtifact, markArtifactStored, upsertStoredArtifact, type ArtifactRow } from "../store/artifacts-repo.js";
import { getEpisode, getEpisodeRecord } from "../store/episodes-repo.js";
import { getRun } from "../store/runs-repo.js";
import { transact } from "../store/tx.js";

/** The artifacts row behind a ref, checked to belong to the calling cell. */
async function artifactFor(ctx: LinkContext, cellId: string, ref: ArtifactRef | undefined): Promise<ArtifactRow> {
  if (!ref || !ref.episodeId || !ref.kind) throw new LinkError("bad_message", "the first chunk (and ArtifactStatus) must carry ref with episode_id and kind");
  const row = await getArtifact(ctx.db, ref.episodeId, ref.kind);
  if (!row) {
    throw new LinkError("artifact_unknown", `no ${ref.kind} artifact was announced for episode ${ref.episodeId} (only EpisodeFinished announces artifacts); drop the local copy`);
  }
  const episode = await getEpisode(ctx.db, row.episode_id);
  if (episode?.cell_id !== cellId) {
    throw new LinkError("artifact_not_yours", `episode ${row.episode_id} was finished by cell ${episode?.cell_id ?? "none"}, not ${cellId}`);
  }
  return row;
}

function storedProgress(row: ArtifactRow): ArtifactProgress {
  return { receivedBytes: row.bytes, complete: true };
}

function refOf(row: ArtifactRow): StoredArtifactRef {
  return { runId: row.run_id, episodeId: row.episode_id, kind: row.kind, fileName: row.file_name, bytes: row.bytes, sha256: row.sha256 };
}

/** Answers a call with what `work` gives, or its error; an error that is not the link's own is logged. */
function answer(ctx: LinkContext, call: { cancelled?: boolean }, name: string, work: Promise<ArtifactProgress>, callback: sendUnaryData<ArtifactProgress>): void {
  work.then(
    (progress) => callback(null, progress),
    (error: unknown) => {
      if (!(error instanceof LinkError) && !call.cancelled) ctx.logger.error(`${name} failed: ${(error as Error).stack ?? error}`);
      callback(toGrpcStatus(error), null);
    },
  );
}

export function handleArtifactStatus(ctx: LinkContext, call: ServerUnaryCall<ArtifactRef, ArtifactProgress>, callback: sendUnaryData<ArtifactProgress>): void {
  answer(ctx, call, "ArtifactStatus", artifactStatus(ctx, call), callback);
}

async function artifactStatus(ctx: LinkContext, call: ServerUnaryCall<ArtifactRef, ArtifactProgress>): Promise<ArtifactProgress> {
  const cell = await authenticateCell(ctx.db, metadataValue(call.metadata, "authorization"));
  const row = await artifactFor(ctx, cell.id, call.request);
  if (row.status !== "pending") return storedProgress(row);
  const progress = await ctx.store.progress(refOf(row));
  return progress.complete ? recordStored(ctx, row) : progress;
}

export function handleUploadArtifact(ctx: LinkContext, call: ServerReadableStream<ArtifactChunk, ArtifactProgress>, callback: sendUnaryData<ArtifactProgress>): void {
  answer(ctx, call, "UploadArtifact", receiveUpload(ctx, call), callback);
}

/** Takes the stream's chunks in arrival order, one at a time (the stream is not read further while a part is written). */
async function receiveUpload(ctx: LinkContext, call: ServerReadableStream<ArtifactChunk, ArtifactProgress>): Promise<ArtifactProgress> {
  const cellId = (await authenticateCell(ctx.db, metadataValue(call.metadata, "authorization"))).id;
  let row: ArtifactRow | undefined;
  let upload: ArtifactUpload | undefined;
  try {
    for await (const chunk of call as AsyncIterable<ArtifactChunk>) {
      if (!row) {
        row = await artifactFor(ctx, cellId, chunk.ref);
        if (row.status !== "pending") return storedProgress(row);
        const opened = await ctx.store.open(refOf(row));
        if (opened === "stored") return await recordStored(ctx, row);
        upload = opened;
      }
      await upload!.write(chunk.offset, chunk.data);
      ctx.metrics.artifactBytesReceived.inc(chunk.data.length);
      if (chunk.last) {
        const committing = upload!;
        upload = undefined;
        await committing.commit();
        return await recordStored(ctx, row);
      }
    }
  } catch (error) {
    // A refused chunk or a broken stream: what came before it is kept, and the cell resumes from there.
    await upload?.flush().catch(() => undefined);
    throw error;
  }
  if (!upload) throw new LinkError("bad_message", "UploadArtifact carried no chunk");
  return { receivedBytes: await upload.flush(), complete: false };
}

/**
 * Writes the ground-truth file of a stored MCAP when its run asked for one; returns its artifacts
 * row. A recording that cannot be read is logged and yields none (the MCAP itself stays served).
 */
async function groundTruthOf(ctx: LinkContext, mcap: ArtifactRow) {
  const run = await getRun(ctx.db, mcap.run_id);
  const episode = await getEpisodeRecord(ctx.db, mcap.episode_id);
  const scenario = run && episode ? groundTruthScenarioOf(run, episode) : undefined;
  if (scenario === undefined) return undefined;
  try {
    const truth = await deriveGroundTruth({
      runId: mcap.run_id, episodeId: mcap.episode_id, scenarioId: scenario, mcap: objectReadable(ctx.store.objects, artifactKey(refOf(mcap)), mcap.bytes),
      mcapFileName: mcap.file_name, mcapSha256: mcap.sha256,
    });
    const ref = { runId: mcap.run_id, episodeId: mcap.episode_id, kind: "ground_truth", fileName: groundTruthFileName(mcap.episode_id) };
    const stored = await ctx.store.writeDerived(ref, new TextEncoder().encode(JSON.stringify(truth)));
    return { ...ref, bytes: stored.bytes, sha256: stored.sha256 };
  } catch (error) {
    ctx.logger.error(`ground truth of episode ${mcap.episode_id} (run ${mcap.run_id}) could not be derived from ${mcap.file_name}: ${(error as Error).message}`);
    return undefined;
  }
}

/**
 * Records a pending artifact whose object is complete in the store (with its ground truth) and
 * tells the run. A row purged meanwhile stays purged, and what was just written is deleted again.
 */
async function recordStored(ctx: LinkContext, row: ArtifactRow): Promise<ArtifactProgress> {
  const derived = row.kind === "mcap" ? await groundTruthOf(ctx, row) : undefined;
  const at = ctx.now().toISOString();
  const marked = await transact(ctx.db, async (tx) => {
    if (!await markArtifactStored(tx, row.episode_id, row.kind, at)) return false;
    if (derived) await upsertStoredArtifact(tx, { ...derived, storedAt: at });
    return true;
  });
  if (!marked && (await getArtifact(ctx.db, row.episode_id, row.kind))?.status === "purged") {
    await ctx.store.objects.delete(artifactKey(refOf(row)));
    if (derived) await ctx.store.objects.delete(artifactKey(derived));
  }
  if (marked) await ctx.lifecycle.progress(ctx.db, row.run_id);
  return storedProgress(row);
}
