/**
 * One agent's Connect stream: authenticate, require Hello first, Welcome, then heartbeats and
 * sequenced messages until the stream ends. When the stream ends (or goes silent past the
 * heartbeat timeout) every episode the cell held goes back to pending with reason "link_lost".
 */
import { randomUUID } from "node:crypto";
import type { Metadata, ServerDuplexStream } from "@grpc/grpc-js";
import type { AgentMessage, CoordinatorMessage, Hello } from "../../protocol/gen/cell.js";
import { getCell, recordHello } from "../store/cells-repo.js";
import { listEpisodeIdsHeldByCellSince } from "../store/episodes-repo.js";
import { authenticateCell } from "./enrollment.js";
import { applySequenced, requeueHeldBy } from "./episode-messages.js";
import type { LinkContext } from "./link-context.js";
import { LinkError, toGrpcStatus } from "../errors/link-errors.js";
import type { CellSession } from "../cells/registry.js";
import { cellInbox } from "./cell-inbox.js";

/** First value of a metadata key as a string. */
export function metadataValue(metadata: Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return value === undefined ? undefined : String(value);
}

export async function handleConnect(ctx: LinkContext, call: ServerDuplexStream<AgentMessage, CoordinatorMessage>): Promise<void> {
  let closed = false;
  let failed = false;
  let session: CellSession | undefined;

  const fail = async (error: unknown): Promise<void> => {
    if (closed && failed) return;
    const wasClosed = closed;
    closed = true;
    failed = true;
    if (wasClosed) return;
    if (!(error instanceof LinkError)) ctx.logger.error(`CellLink Connect failed: ${(error as Error).stack ?? error}`);
    // What the cell held is requeued before its stream ends, so whoever sees the stream end (the agent,
    // a test) finds the episodes already pending.
    try {
      await release();
    } finally {
      call.emit("error", toGrpcStatus(error));
    }
  };

  const release = async (): Promise<void> => {
    const ending = session;
    session = undefined;
    if (!ending || !ctx.registry.detach(ending)) return;
    ctx.metrics.cellsConnected.set(ctx.registry.sessions().length);
    ctx.logger.info(`cell ${ending.cellId}: disconnected`);
    // The cell moved to another coordinator, which now answers for what it holds.
    if (ctx.cluster && !await ctx.cluster.closed(ending, ctx.stopping)) return;
    // On shutdown the agent may well finish its episode and report it after the restart.
    if (ctx.stopping) return;
    await requeueHeldBy(ctx, ending.cellId, "link_lost", `CellLink stream of session ${ending.sessionId} ended`);
  };

  let cellId: string;
  try {
    cellId = (await authenticateCell(ctx.db, metadataValue(call.metadata, "authorization"))).id;
  } catch (error) {
    await fail(error);
    return;
  }

  // The cell's messages are handled one after another, in arrival order: each awaits the store, and
  // an EpisodeEnded must not overtake its EpisodeStarted. The stream's end waits its turn behind them.
  // Past a bound of waiting messages the stream is paused (cell-inbox.ts), so a stalled store or a
  // flooding agent holds the backlog in the agent, not in this process.
  const inOrder = cellInbox(call, {
    onError: (error) => void fail(error),
    onWaiting: (change) => ctx.metrics.cellMessagesWaiting.inc(change),
    onPause: () => ctx.metrics.cellStreamPauses.inc(),
  });
  ctx.messageQueues?.add(inOrder);
  const drained = () => void inOrder.idle().then(() => ctx.messageQueues?.delete(inOrder));
  call.on("data", (message: AgentMessage) => {
    if (closed) return;
    void inOrder.push(async () => {
      if (failed) return;
      try {
        if (!session) session = await open(ctx, call, cellId, message, fail);
        else await onMessage(ctx, session, message);
      } catch (error) {
        await fail(error);
      }
    });
  });
  call.on("end", () => {
    if (closed) return;
    closed = true;
    call.end();
    void inOrder.push(release).then(drained);
  });
  call.on("cancelled", () => {
    closed = true;
    void inOrder.push(release).then(drained);
  });
  call.on("error", () => {
    closed = true;
    void inOrder.push(release).then(drained);
  });
}

/** Handles the first message, which must be this cell's Hello; returns the live session. */
async function open(ctx: LinkContext, call: ServerDuplexStream<AgentMessage, CoordinatorMessage>, cellId: string, message: AgentMessage, fail: (error: unknown) => Promise<void>): Promise<CellSession> {
  const hello: Hello | undefined = message.hello;
  if (!hello) throw new LinkError("hello_required", "the first message on Connect must be Hello (seq 0)");
  if (hello.cellId !== cellId) {
    throw new LinkError("cell_id_mismatch", `Hello says cell ${JSON.stringify(hello.cellId)} but the token belongs to cell ${cellId}; use that cell's own token`);
  }
  const session: CellSession = {
    cellId,
    sessionId: randomUUID(),
    hello,
    connectedAt: ctx.now().toISOString(),
    send: (out) => {
      if (!call.cancelled && call.writable) call.write(out);
    },
    close: (error) => void fail(error),
  };
  await recordHello(ctx.db, cellId, JSON.stringify(await helloToRecord(ctx, cellId, hello)), session.connectedAt);

  const displaced = ctx.registry.attach(session);
  if (displaced) {
    // The old stream is dead or a duplicate agent; whatever it held goes back to pending first.
    displaced.close(new LinkError("superseded", `cell ${cellId} connected again (session ${session.sessionId}); this stream is closed`));
    await requeueHeldBy(ctx, cellId, "link_lost", `superseded by session ${session.sessionId}`);
  }
  const previousHolder = await ctx.cluster?.opened(session);
  if (previousHolder && !displaced) {
    await requeueHeldBy(ctx, cellId, "link_lost", `the cell left coordinator ${previousHolder} for session ${session.sessionId} here`);
  }
  ctx.metrics.cellsConnected.set(ctx.registry.sessions().length);

  const lastSeqApplied = (await getCell(ctx.db, cellId))?.last_seq_applied ?? 0;
  session.send({
    welcome: { sessionId: session.sessionId, lastSeqApplied, serverTimeMs: ctx.now().getTime(), heartbeatIntervalMs: ctx.heartbeatIntervalMs },
  });

  // Viewers watching before a reconnect keep watching.
  await ctx.live.resync(cellId);

  const problem = ctx.registry.firmwareMismatchOf(cellId);
  if (problem) {
    ctx.logger.warn(`cell ${cellId}: firmware_mismatch: ${problem}`);
    session.send({ refusal: { code: "firmware_mismatch", message: problem } });
  } else {
    ctx.logger.info(`cell ${cellId}: connected (${hello.robotModel}@${hello.firmware} in ${hello.environment}, agent ${hello.agentVersion})`);
  }

  if (hello.lastSeqSent < lastSeqApplied) {
    ctx.logger.warn(`cell ${cellId}: agent says its highest seq is ${hello.lastSeqSent} but ${lastSeqApplied} was applied; its outbox may have been lost`);
  }
  if (hello.interruptedEpisodeId) {
    await requeueHeldBy(ctx, cellId, "agent_restart", `agent ${hello.agentVersion} reconnected after losing the episode`, hello.interruptedEpisodeId);
  }
  ctx.scheduler.kick();
  return session;
}

async function onMessage(ctx: LinkContext, session: CellSession, message: AgentMessage): Promise<void> {
  ctx.registry.heard(session.cellId);
  if (message.hello) throw new LinkError("bad_message", "Hello may only be the first message of a stream; reconnect to say Hello again");
  if (message.seq === 0) {
    if (message.heartbeat) {
      const before = ctx.registry.liveInstrumentKinds(session.cellId)?.join();
      ctx.registry.recordHeartbeat(session.cellId, message.heartbeat);
      // An instrument lost or back changes which episodes the cell can score: match again now.
      if (ctx.registry.liveInstrumentKinds(session.cellId)?.join() !== before) ctx.scheduler.kick();
      if (message.heartbeat.state === "idle" && !message.heartbeat.episodeId) await releaseForgotten(ctx, session);
    } else if (message.attention) {
      ctx.registry.recordAttention(session.cellId, message.attention);
    } else ctx.logger.warn(`cell ${session.cellId}: a message other than Heartbeat came with seq 0; only Heartbeat and Attention may; durable messages need seq > 0; skipped`);
    return;
  }
  await applySequenced(ctx, session.cellId, message);
  session.send({ ack: { seq: message.seq } });
}

/**
 * A cell that reports idle with no episode does not hold an episode the store assigned to it
 * before this session began (the AssignEpisode was lost, e.g. in a coordinator restart):
 * requeue it. Episodes assigned on this session are left alone, their AssignEpisode may still be
 * on its way.
 */
async function releaseForgotten(ctx: LinkContext, session: CellSession): Promise<void> {
  for (const id of await listEpisodeIdsHeldByCellSince(ctx.db, session.cellId, session.connectedAt)) {
    await requeueHeldBy(ctx, session.cellId, "link_lost", `cell reconnected idle without episode ${id}`, id);
  }
}

/**
 * The Hello as the cells row keeps it. An agent always lists instruments (joint_states and estop at
 * least); a Hello listing none is the doctor's short session, which says nothing about them, so the
 * instruments the cell last reported are kept (submission checks read them: runs/instrument-check.ts).
 */
async function helloToRecord(ctx: LinkContext, cellId: string, hello: Hello): Promise<Hello> {
  if (hello.instruments.length > 0) return hello;
  const previous = (await getCell(ctx.db, cellId))?.hello;
  if (!previous) return hello;
  try {
    const instruments = (JSON.parse(previous) as Partial<Hello>).instruments;
    return Array.isArray(instruments) && instruments.length > 0 ? { ...hello, instruments } : hello;
  } catch {
    return hello;
  }
}
