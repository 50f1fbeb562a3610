/**
 * The CellLink artifact calls. ArtifactStatus says how many bytes of an artifact are already
 * held; UploadArtifact appends chunks from exactly that offset and, on the chunk marked `last`,
 * verifies the whole file against the artifacts row EpisodeFinished announced and stores it.
 *
 * A stored MCAP of a verify scenario episode with `return_ground_truth` first yields its ground-truth
 * file (coordinator/artifacts/ground-truth.ts); the MCAP row turns `stored` together with the
 * ground-truth row, so the run cannot complete before its ground truth exists.
 */
import type { sendUnaryData, ServerReadableStream, ServerUnaryCall } from "@grpc/grpc-js";
import type { ArtifactChunk, ArtifactProgress, ArtifactRef } from "../../protocol/gen/cell.js";
import { deriveGroundTruth, groundTruthFileName } from "../artifacts/ground-truth.js";
import { authenticateCell } from "./enrollment.js";
import { metadataValue } from "./connect-session.js";
import type { LinkContext } from "./link-context.js";
import { LinkError, toGrpcStatus } from "../errors/link-errors.js";
import { groundTruthScenarioOf } from "../kinds/verify.js";
import { getArtifact, markArtifactStored, upsertStoredArtifact, type ArtifactRow } from "../store/artifacts-repo.js";
import { getEpisode, getEpisodeRecord } from "../store/episodes-repo.js";
import { getRun } from "../store/runs-repo.js";

/** The artifacts row behind a ref, checked to belong to the calling cell. */
function artifactFor(ctx: LinkContext, cellId: string, ref: ArtifactRef | undefined): ArtifactRow {
  if (!ref || !ref.episodeId || !ref.kind) throw new LinkError("bad_message", "the first chunk (and ArtifactStatus) must carry ref with episode_id and kind");
  const row = getArtifact(ctx.db, ref.episodeId, ref.kind);
  if (!row) {
    throw new LinkError("artifact_unknown", `no ${ref.kind} artifact was announced for episode ${ref.episodeId} (only EpisodeFinished announces artifacts); drop the local copy`);
  }
  const episode = getEpisode(ctx.db, row.episode_id);
  if (episode?.cell_id !== cellId) {
    throw new LinkError("artifact_not_yours", `episode ${row.episode_id} was finished by cell ${episode?.cell_id ?? "none"}, not ${cellId}`);
  }
  return row;
}

function storedProgress(row: ArtifactRow): ArtifactProgress {
  return { receivedBytes: row.bytes, complete: true };
}

export function handleArtifactStatus(ctx: LinkContext, call: ServerUnaryCall<ArtifactRef, ArtifactProgress>, callback: sendUnaryData<ArtifactProgress>): void {
  try {
    const cell = authenticateCell(ctx.db, metadataValue(call.metadata, "authorization"));
    const row = artifactFor(ctx, cell.id, call.request);
    if (row.status !== "pending") return callback(null, storedProgress(row));
    callback(null, { receivedBytes: ctx.store.receivedBytes(row.episode_id, row.kind), complete: false });
  } catch (error) {
    callback(toGrpcStatus(error), null);
  }
}

export function handleUploadArtifact(ctx: LinkContext, call: ServerReadableStream<ArtifactChunk, ArtifactProgress>, callback: sendUnaryData<ArtifactProgress>): void {
  let answered = false;
  const answer = (error: unknown, progress?: ArtifactProgress): void => {
    if (answered) return;
    answered = true;
    if (error) {
      if (!(error instanceof LinkError)) ctx.logger.error(`UploadArtifact failed: ${(error as Error).stack ?? error}`);
      callback(toGrpcStatus(error), null);
    } else callback(null, progress!);
  };

  let cellId: string;
  try {
    cellId = authenticateCell(ctx.db, metadataValue(call.metadata, "authorization")).id;
  } catch (error) {
    answer(error);
    return;
  }

  let row: ArtifactRow | undefined;
  let size = 0;
  let finishing: Promise<void> | undefined;

  // Chunks are handled synchronously in arrival order; only the final verification is async.
  call.on("data", (chunk: ArtifactChunk) => {
    if (answered || finishing) return;
    try {
      if (!row) {
        row = artifactFor(ctx, cellId, chunk.ref);
        if (row.status !== "pending") return answer(null, storedProgress(row));
        size = ctx.store.receivedBytes(row.episode_id, row.kind);
      }
      const current = row;
      if (chunk.data.length > 0 || chunk.offset !== size) {
        size = ctx.store.append(current.episode_id, current.kind, chunk.offset, chunk.data);
        ctx.metrics.artifactBytesReceived.inc(chunk.data.length);
        if (size > current.bytes) {
          ctx.store.discard(current.episode_id, current.kind);
          throw new LinkError("artifact_corrupt", `${current.kind} of episode ${current.episode_id} grew past the announced ${current.bytes} bytes; upload it again from 0`);
        }
      }
      if (chunk.last) finishing = finish(current);
    } catch (error) {
      if (row) ctx.store.sync(row.episode_id, row.kind);
      answer(error);
    }
  });
  call.on("end", () => {
    if (answered) return;
    if (finishing) return;
    if (!row) return answer(new LinkError("bad_message", "UploadArtifact carried no chunk"));
    ctx.store.sync(row.episode_id, row.kind);
    answer(null, { receivedBytes: ctx.store.receivedBytes(row.episode_id, row.kind), complete: false });
  });
  call.on("error", () => {
    if (row && !answered) ctx.store.sync(row.episode_id, row.kind);
  });

  /**
   * Writes the ground-truth file of a stored MCAP when its run asked for one; returns its artifacts
   * row. A recording that cannot be read is logged and yields none (the MCAP itself stays served).
   */
  async function groundTruthOf(mcap: ArtifactRow, mcapPath: string) {
    const run = getRun(ctx.db, mcap.run_id);
    const episode = getEpisodeRecord(ctx.db, mcap.episode_id);
    const scenario = run && episode ? groundTruthScenarioOf(run, episode) : undefined;
    if (scenario === undefined) return undefined;
    try {
      const truth = await deriveGroundTruth({
        runId: mcap.run_id, episodeId: mcap.episode_id, scenarioId: scenario, mcapPath, mcapFileName: mcap.file_name, mcapSha256: mcap.sha256,
      });
      const fileName = groundTruthFileName(mcap.episode_id);
      const ref = { runId: mcap.run_id, episodeId: mcap.episode_id, kind: "ground_truth", fileName };
      const stored = ctx.store.writeDerived(ref, new TextEncoder().encode(JSON.stringify(truth)));
      return { ...ref, bytes: stored.bytes, sha256: stored.sha256 };
    } catch (error) {
      ctx.logger.error(`ground truth of episode ${mcap.episode_id} (run ${mcap.run_id}) could not be derived from ${mcap.file_name}: ${(error as Error).message}`);
      return undefined;
    }
  }

  async function finish(current: ArtifactRow): Promise<void> {
    try {
      const path = await ctx.store.commit({
        runId: current.run_id,
        episodeId: current.episode_id,
        kind: current.kind,
        fileName: current.file_name,
        bytes: current.bytes,
        sha256: current.sha256,
      });
      const derived = current.kind === "mcap" ? await groundTruthOf(current, path) : undefined;
      const at = ctx.now().toISOString();
      ctx.db.transaction(() => {
        if (derived) upsertStoredArtifact(ctx.db, { ...derived, storedAt: at });
        markArtifactStored(ctx.db, current.episode_id, current.kind, at);
      })();
      answer(null, storedProgress(current));
      ctx.lifecycle.progress(current.run_id);
    } catch (error) {
      answer(error);
    }
  }
}
