/**
 * Messages between the coordinators sharing one PostgreSQL database, over LISTEN/NOTIFY: a run
 * event for SSE clients connected elsewhere, a message for a cell whose stream another coordinator
 * holds, a nudge to schedule. A message is sent with pg_notify on the store's connection, so one
 * sent inside a transaction goes out only if it commits; each coordinator listens on a connection
 * of its own and ignores its own messages.
 *
 * NOTIFY is not durable: a coordinator whose listening connection drops misses what was sent
 * meanwhile. Everything sent here is also reached another way within a bounded time (the
 * scheduler's periodic pass, a cell's own report, the store an SSE client reads on reconnect),
 * and after a reconnect the listeners get a `resync` to check at once. The loss itself is told too
 * (`lost`), for a listener that must stop trusting what it holds at once: the API key cache.
 *
 * The same connection listens for the store's key revocations (keys-repo.ts NOTIFYs the key id on
 * its own channel when the revoking transaction commits), handed on as `key-revoked`, this
 * coordinator's own included.
 */
import pg from "pg";
import type { LinkReason } from "../errors/link-errors.js";
import type { RunEvent } from "../runs/run-events.js";
import type { Db } from "../store/database.js";
import { notifyChannelMany } from "../store/coordinators-repo.js";
import { KEY_REVOCATIONS_CHANNEL } from "../store/keys-repo.js";
import { OutgoingNotifications } from "./outgoing-notifications.js";

export type ClusterMessage =
  | { type: "run-event"; event: RunEvent }
  /** `message`: a CoordinatorMessage as JSON (ts-proto toJSON), for the coordinator holding `cellId`. */
  | { type: "cell"; cellId: string; message: unknown }
  /** The cell's stream moved to another coordinator: whoever holds `sessionId` closes it without requeueing. */
  | { type: "superseded"; cellId: string; sessionId: string }
  /** Whoever holds `sessionId` closes it with this reason (the cell was revoked). */
  | { type: "close-cell"; cellId: string; sessionId: string; reason: LinkReason; message: string }
  | { type: "kick" }
  /** Local only: the listening connection came back; what was sent meanwhile is lost. */
  | { type: "resync" }
  /** Local only: the listening connection dropped; nothing is heard until `resync`. */
  | { type: "lost" }
  /** From the store (keys-repo.ts), not published here: API key `keyId` was revoked. */
  | { type: "key-revoked"; keyId: string };

export interface ClusterBus {
  /** True while the listening connection listens (false while it is down or reconnecting). */
  readonly listening: boolean;
  publish(message: Exclude<ClusterMessage, { type: "resync" | "lost" | "key-revoked" }>): void;
  subscribe(listener: (message: ClusterMessage) => void): void;
  close(): Promise<void>;
}

export interface ClusterBusOptions {
  db: Db;
  connectionString: string;
  coordinatorId: string;
  logger?: { info(message: string): void; warn(message: string): void; error(message: string): void };
}

const CHANNEL = "assay_cluster";
/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7900;
/** Messages and payload characters (payloads are JSON, mostly ASCII) sent by one statement at most. */
const MAX_BATCH = 64;
const MAX_BATCH_CHARS = 256 * 1024;
/** Payload characters waiting to be sent at most (a few tens of seconds of a large fleet's messages); past it the oldest go. */
const MAX_QUEUED_CHARS = 16 * 1024 * 1024;

export async function startClusterBus(options: ClusterBusOptions): Promise<ClusterBus> {
  const { db, coordinatorId } = options;
  const logger = options.logger ?? console;
  const listeners: Array<(message: ClusterMessage) => void> = [];
  let client: pg.Client | undefined;
  let closed = false;
  let retryMs = 250;
  let retry: NodeJS.Timeout | undefined;

  const dispatch = (message: ClusterMessage) => {
    for (const listener of listeners) {
      try {
        listener(message);
      } catch (error) {
        logger.error(`cluster bus: a ${message.type} listener failed: ${(error as Error).stack ?? error}`);
      }
    }
  };

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: options.connectionString, keepAlive: true });
    next.on("notification", (notification) => {
      if (notification.channel === KEY_REVOCATIONS_CHANNEL && notification.payload) {
        dispatch({ type: "key-revoked", keyId: notification.payload });
        return;
      }
      if (notification.channel !== CHANNEL || !notification.payload) return;
      let envelope: { from: string; message: ClusterMessage };
      try {
        envelope = JSON.parse(notification.payload);
      } catch {
        logger.warn(`cluster bus: dropped a notification that is not JSON: ${notification.payload.slice(0, 80)}`);
        return;
      }
      if (envelope.from !== coordinatorId) dispatch(envelope.message);
    });
    const lost = (why: string) => {
      if (client !== next || closed) return;
      client = undefined;
      logger.warn(`cluster bus: the listening connection was lost (${why}); reconnecting`);
      void next.end().catch(() => undefined);
      dispatch({ type: "lost" });
      scheduleReconnect();
    };
    next.on("error", (error) => lost(error.message));
    next.on("end", () => lost("closed by the server"));
    await next.connect();
    await next.query(`LISTEN ${CHANNEL}; LISTEN ${KEY_REVOCATIONS_CHANNEL}`);
    client = next;
  };

  const scheduleReconnect = () => {
    retry = setTimeout(() => {
      connect()
        .then(() => {
          retryMs = 250;
          logger.info("cluster bus: listening again");
          dispatch({ type: "resync" });
        })
        .catch((error: Error) => {
          logger.warn(`cluster bus: reconnecting failed (${error.message}); trying again in ${retryMs} ms`);
          retryMs = Math.min(retryMs * 2, 5000);
          if (!closed) scheduleReconnect();
        });
    }, retryMs);
    retry.unref();
  };

  // Messages go out in order, a batch per statement (notifyChannelMany), bounded (outgoing-notifications.ts).
  const outgoing: OutgoingNotifications = new OutgoingNotifications({
    send: (batch) => notifyChannelMany(db, CHANNEL, batch),
    maxBatch: MAX_BATCH,
    maxBatchChars: MAX_BATCH_CHARS,
    maxQueuedChars: MAX_QUEUED_CHARS,
    onDropped: (count) => {
      logger.warn(`cluster bus: ${count} messages to the other coordinators were dropped while the database did not take them (more than ${MAX_QUEUED_CHARS / 1024 / 1024} MiB waited); asking them to check at once`);
      outgoing.push(JSON.stringify({ from: coordinatorId, message: { type: "kick" } }));
    },
    onError: (error) => logger.error(`cluster bus: sending to the other coordinators failed (what they miss reaches them another way): ${(error as Error).message}`),
  });

  await connect();

  return {
    get listening() {
      return client !== undefined && !closed;
    },
    publish(message) {
      const payload = JSON.stringify({ from: coordinatorId, message });
      if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
        logger.error(`cluster bus: a ${message.type} message of ${Buffer.byteLength(payload)} bytes is too large for NOTIFY; not sent`);
        return;
      }
      outgoing.push(payload);
    },
    subscribe(listener) {
      listeners.push(listener);
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      // What was published goes out before the store closes.
      await outgoing.idle();
      const ending = client;
      client = undefined;
      await ending?.end().catch(() => undefined);
    },
  };
}
