/**
 * The CellLink LiveFeed call: a cell streams the camera frames and live state its current Watch
 * asks for. Authenticated by the cell token like every call; messages of a cell that is not
 * connected (no Connect stream) are ignored, since nobody could have asked for them.
 */
import type { sendUnaryData, ServerReadableStream } from "@grpc/grpc-js";
import type { LiveFeedEnd, LiveMessage } from "../../protocol/gen/cell.js";
import { LinkError, toGrpcStatus } from "../errors/link-errors.js";
import { metadataValue } from "./connect-session.js";
import { authenticateCell } from "./enrollment.js";
import type { LinkContext } from "./link-context.js";

export async function handleLiveFeed(ctx: LinkContext, call: ServerReadableStream<LiveMessage, LiveFeedEnd>, callback: sendUnaryData<LiveFeedEnd>): Promise<void> {
  let cellId: string;
  try {
    cellId = (await authenticateCell(ctx.db, metadataValue(call.metadata, "authorization"))).id;
  } catch (error) {
    callback(toGrpcStatus(error), null);
    return;
  }
  let answered = false;
  const answer = (error: unknown) => {
    if (answered) return;
    answered = true;
    if (error) callback(toGrpcStatus(error), null);
    else callback(null, {});
  };
  call.on("data", (message: LiveMessage) => {
    if (!ctx.registry.session(cellId)) return;
    ctx.registry.heard(cellId);
    ctx.live.receive(cellId, message);
  });
  call.on("end", () => answer(undefined));
  call.on("error", (error) => answer(error instanceof LinkError ? error : undefined));
  call.on("cancelled", () => answer(undefined));
}
