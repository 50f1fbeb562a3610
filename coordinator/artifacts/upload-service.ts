/**
 * The CellLink artifact calls. ArtifactStatus says how many bytes of an artifact are already
 * held; UploadArtifact appends chunks from exactly that offset and, on the chunk marked `last`,
 * verifies the whole file against the artifacts row EpisodeFinished announced and stores it.
 */
import type { sendUnaryData, ServerReadableStream, ServerUnaryCall } from "@grpc/grpc-js";
import type { ArtifactChunk, ArtifactProgress, ArtifactRef } from "../../protocol/gen/cell.js";
import { authenticateCell } from "../fleet/enrollment.js";
import { metadataValue } from "../fleet/connect-session.js";
import type { LinkContext } from "../fleet/link-context.js";
import { LinkError, toGrpcStatus } from "../fleet/link-errors.js";
import { getArtifact, markArtifactStored, type ArtifactRow } from "../store/artifacts-repo.js";
import { getEpisode } from "../store/episodes-repo.js";

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

  async function finish(current: ArtifactRow): Promise<void> {
    try {
      await ctx.store.commit({
        runId: current.run_id,
        episodeId: current.episode_id,
        kind: current.kind,
        fileName: current.file_name,
        bytes: current.bytes,
        sha256: current.sha256,
      });
      markArtifactStored(ctx.db, current.episode_id, current.kind, ctx.now().toISOString());
      answer(null, storedProgress(current));
      ctx.completer.maybeComplete(current.run_id);
    } catch (error) {
      answer(error);
    }
  }
}
