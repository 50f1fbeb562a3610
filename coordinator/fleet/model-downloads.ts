/**
 * The CellLink FetchModel call: a cell downloads the model of the checkpoint policy it was
 * assigned, from any offset (a broken download resumes where its file ends), in 1 MiB chunks that
 * each carry the file's size and sha256. A cell gets a model only while it holds an episode of a
 * run that pinned it (`resolved_pins.models`): customers' weights go nowhere else.
 */
import type { ServerWritableStream } from "@grpc/grpc-js";
import type { ModelChunk, ModelRequest } from "../../protocol/gen/cell.js";
import { LinkError, toGrpcStatus } from "../errors/link-errors.js";
import { modelKey } from "../models/model-files.js";
import { getEpisode } from "../store/episodes-repo.js";
import { getModel } from "../store/models-repo.js";
import { getRun } from "../store/runs-repo.js";
import { metadataValue } from "./connect-session.js";
import { authenticateCell } from "./enrollment.js";
import type { LinkContext } from "./link-context.js";

const CHUNK_BYTES = 1024 * 1024;

/** Whether the run of the episode assigned to the cell pinned this model. */
async function mayFetch(ctx: LinkContext, cellId: string, modelId: string): Promise<boolean> {
  const episodeId = ctx.registry.assignedEpisodeOf(cellId);
  const episode = episodeId ? await getEpisode(ctx.db, episodeId) : undefined;
  const run = episode ? await getRun(ctx.db, episode.run_id) : undefined;
  if (!run) return false;
  return Object.values(run.resolvedPins.models ?? {}).some((m) => m.id === modelId);
}

export async function handleFetchModel(ctx: LinkContext, call: ServerWritableStream<ModelRequest, ModelChunk>): Promise<void> {
  const fail = (error: unknown) => {
    if (!(error instanceof LinkError)) ctx.logger.error(`FetchModel failed: ${(error as Error).stack ?? error}`);
    call.emit("error", toGrpcStatus(error));
  };
  try {
    const cell = await authenticateCell(ctx.db, metadataValue(call.metadata, "authorization"));
    const { modelId, offset } = call.request;
    const model = await getModel(ctx.db, modelId);
    if (!model || model.status !== "ready" || !await mayFetch(ctx, cell.id, modelId)) {
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
    void send(ctx, call, model.id, start, header).catch(fail);
  } catch (error) {
    fail(error);
  }
}

/** Streams the model from `start` in chunks of CHUNK_BYTES (the last shorter), as fast as the cell reads them. */
async function send(ctx: LinkContext, call: ServerWritableStream<ModelRequest, ModelChunk>, modelId: string, start: number, header: { totalBytes: number; sha256: string }): Promise<void> {
  const { body } = await ctx.store.objects.get(modelKey(modelId), { start });
  if (call.cancelled) return void body.destroy();
  call.once("cancelled", () => body.destroy());
  let position = start;
  const write = async (data: Buffer) => {
    const more = call.write({ offset: position, data, ...header });
    position += data.length;
    if (more) return;
    // Until the cell reads on, or goes away.
    await new Promise<void>((resume) => {
      const done = () => {
        call.off("drain", done);
        call.off("close", done);
        resume();
      };
      call.once("drain", done);
      call.once("close", done);
    });
  };
  let held: Buffer[] = [];
  let heldBytes = 0;
  try {
    for await (const piece of body) {
      held.push(piece as Buffer);
      heldBytes += (piece as Buffer).length;
      if (heldBytes < CHUNK_BYTES) continue;
      const all = Buffer.concat(held);
      let at = 0;
      for (; all.length - at >= CHUNK_BYTES; at += CHUNK_BYTES) await write(all.subarray(at, at + CHUNK_BYTES));
      held = [all.subarray(at)];
      heldBytes = all.length - at;
    }
  } catch (error) {
    if (call.cancelled) return; // the cell went away: nothing to answer
    throw error;
  }
  if (heldBytes > 0) await write(Buffer.concat(held));
  call.end();
}
