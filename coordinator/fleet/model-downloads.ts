/**
 * The CellLink FetchModel call: a cell downloads the model of the checkpoint policy it was
 * assigned, from any offset (a broken download resumes where its file ends), in 1 MiB chunks that
 * each carry the file's size and sha256. A cell gets a model only while it holds an episode of a
 * run that pinned it (`resolved_pins.models`): customers' weights go nowhere else.
 */
import { createReadStream } from "node:fs";
import type { ServerWritableStream } from "@grpc/grpc-js";
import type { ModelChunk, ModelRequest } from "../../protocol/gen/cell.js";
import { LinkError, toGrpcStatus } from "../errors/link-errors.js";
import { modelPath } from "../models/model-files.js";
import { getEpisode } from "../store/episodes-repo.js";
import { getModel } from "../store/models-repo.js";
import { getRun } from "../store/runs-repo.js";
import { metadataValue } from "./connect-session.js";
import { authenticateCell } from "./enrollment.js";
import type { LinkContext } from "./link-context.js";

const CHUNK_BYTES = 1024 * 1024;

/** Whether the run of the episode assigned to the cell pinned this model. */
function mayFetch(ctx: LinkContext, cellId: string, modelId: string): boolean {
  const episodeId = ctx.registry.assignedEpisodeOf(cellId);
  const episode = episodeId ? getEpisode(ctx.db, episodeId) : undefined;
  const run = episode ? getRun(ctx.db, episode.run_id) : undefined;
  if (!run) return false;
  return Object.values(run.resolvedPins.models ?? {}).some((m) => m.id === modelId);
}

export function handleFetchModel(ctx: LinkContext, call: ServerWritableStream<ModelRequest, ModelChunk>): void {
  const fail = (error: unknown) => {
    if (!(error instanceof LinkError)) ctx.logger.error(`FetchModel failed: ${(error as Error).stack ?? error}`);
    call.emit("error", toGrpcStatus(error));
  };
  try {
    const cell = authenticateCell(ctx.db, metadataValue(call.metadata, "authorization"));
    const { modelId, offset } = call.request;
    const model = getModel(ctx.db, modelId);
    if (!model || model.status !== "ready" || !mayFetch(ctx, cell.id, modelId)) {
      throw new LinkError("artifact_unknown", `model ${JSON.stringify(modelId)} is not one this cell's assigned episode runs (or it was deleted)`);
    }
    const start = Number(offset);
    if (!(start >= 0 && start <= model.bytes)) throw new LinkError("offset_mismatch", `offset ${start} is outside the model's ${model.bytes} bytes`);
    const header = { totalBytes: model.bytes, sha256: model.sha256 };
    if (start === model.bytes) {
      call.write({ offset: start, data: new Uint8Array(0), ...header });
      call.end();
      return;
    }
    let position = start;
    const stream = createReadStream(modelPath(ctx.store.dir, model.id), { start, highWaterMark: CHUNK_BYTES });
    stream.on("data", (data) => {
      const chunk = data as Buffer;
      const more = call.write({ offset: position, data: chunk, ...header });
      position += chunk.length;
      if (!more) {
        stream.pause();
        call.once("drain", () => stream.resume());
      }
    });
    stream.once("end", () => call.end());
    stream.once("error", fail);
    call.once("cancelled", () => stream.destroy());
  } catch (error) {
    fail(error);
  }
}
