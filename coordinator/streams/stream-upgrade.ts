/**
 * WebSocket upgrades under the streams URL (`<streams_url>/cells/<cell>` and `<streams_url>/runs/<run>`),
 * authenticated before the upgrade: the signed token in the URL (stream-tokens.ts), or a bearer key
 * with streams:read. A run's URL (the pilot's `stream_url`) resolves to the cell running the run at
 * connect time. Refusals are plain HTTP answers with the spec's error envelope, never an upgrade;
 * past the cap of open signalling WebSockets per key or per account (connection-caps.ts), 429.
 * An admitted socket is handed to the WebRTC signalling (coordinator/streams/webrtc/) and bound to
 * the grant that admitted it (live-access-watch.ts): when the grant lapses the viewer gets
 * `{"type":"error","message":<why>}`, its peer connection is closed at once and the socket closes
 * with code 4403 (ACCESS_LAPSED_CLOSE_CODE) and the reason.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { AssayError, errorEnvelope } from "../errors/assay-error.js";
import type { ConnectedCell, FleetView } from "../cells/fleet-view.js";
import type { Db } from "../store/database.js";
import type { ConnectionCaps } from "./connection-caps.js";
import type { LiveAccess } from "./live-access-watch.js";
import type { RejectedKeyLimit } from "../auth/authenticate.js";
import type { ApiKeyCache } from "../auth/api-key-cache.js";
import { admitViewer, streamViewer, workOfCell, type ViewerGrant } from "./stream-access.js";
import { runStreamTarget } from "../auth/stream-tokens.js";
import { forwardUpgrade, wasForwarded, type LiveForwarding } from "./live-forwarding.js";
import { answerAndDestroy, rawErrorAnswer } from "../http/raw-answer.js";

/** Close code of a signalling socket whose grant lapsed (the run ended, the cell moved on, the key was revoked, the token expired). */
export const ACCESS_LAPSED_CLOSE_CODE = 4403;

export interface SignallingHandler {
  /** Takes over the socket; returns the function that ends the view now (peer connection included), if a view started. */
  handle(ws: WebSocket, cellId: string): ((code: number, reason: string) => void) | void;
}

export interface StreamUpgradeOptions {
  db: Db;
  fleet: FleetView;
  signalling: SignallingHandler;
  operatorAccountId: string;
  /** The public streams URL; its path is where upgrades are taken (default "/streams"). */
  streamsUrl: string;
  docsUrl: string;
  now: () => Date;
  /** Cells held by other coordinators: their upgrades are passed to the holder. Default none. */
  forwarding?: LiveForwarding;
  /** Caps on open signalling WebSockets per key and per account. */
  caps: ConnectionCaps;
  /** Re-checks each open view's grant while it lasts. */
  access: LiveAccess;
  /** Unknown or revoked bearer keys per client address (the one /v1 counts against). Default none. */
  rejectedKeys?: RejectedKeyLimit | null;
  /** The coordinator's verified API keys (the ones /v1 uses). Default: every bearer key read from the store. */
  keys?: ApiKeyCache;
}

/** The grant a request watches a cell under, or an AssayError saying why not. */
async function admit(o: StreamUpgradeOptions, req: IncomingMessage, base: string): Promise<ViewerGrant> {
  const url = new URL(req.url ?? "/", "http://local");
  const match = new RegExp(`^${base}/(cells|runs)/([^/]+)$`).exec(url.pathname);
  if (!match) throw new AssayError("not_found", `no stream at ${url.pathname}; stream URLs are ${base}/cells/<cell> (from GET /v1/streams/{cell}) or ${base}/runs/<run> (a pilot's stream_url)`);
  const [, kind, rawId] = match;
  const id = decodeURIComponent(rawId!);
  const target = kind === "cells" ? id : runStreamTarget(id);
  const credentials = { token: url.searchParams.get("token") ?? undefined, authorization: req.headers.authorization, keys: o.keys, guard: o.rejectedKeys ? { limit: o.rejectedKeys, req } : undefined };
  const viewer = await streamViewer(o.db, target, credentials, o.now());
  let cellId = id;
  if (kind === "runs") {
    let running: ConnectedCell | undefined;
    for (const c of await o.fleet.connectedCells()) {
      if ((await workOfCell(o.db, o.fleet, c.cellId))?.runId === id) {
        running = c;
        break;
      }
    }
    if (!running) throw new AssayError("not_found", `run ${id} is not on a cell right now (queued, between episodes or ended); connect again while it runs`, { runId: id });
    cellId = running.cellId;
  }
  const grant = await admitViewer(o.db, o.fleet, o.operatorAccountId, viewer, cellId);
  if (!grant) throw new AssayError("not_found", `no stream ${JSON.stringify(cellId)}: no such cell, or it is not running your work now`);
  return grant;
}

/** The coordinator holding the stream a cells/ or runs/ URL names, when it is another one. */
async function holderOfTarget(forwarding: LiveForwarding, req: IncomingMessage, base: string): Promise<string | undefined> {
  const match = new RegExp(`^${base}/(cells|runs)/([^/]+)$`).exec(new URL(req.url ?? "/", "http://local").pathname);
  if (!match) return undefined;
  let id: string;
  try {
    id = decodeURIComponent(match[2]!);
  } catch {
    return undefined;
  }
  const cellId = match[1] === "cells" ? id : await forwarding.cellOfRun(id);
  return cellId === undefined ? undefined : await forwarding.holderOf(cellId);
}

function refuse(socket: Duplex, error: AssayError, docsUrl: string): void {
  const retryAfter: Record<string, string> = error.code === "rate_limited" && error.retryAfterS !== undefined ? { "Retry-After": String(Math.ceil(error.retryAfterS)) } : {};
  answerAndDestroy(socket, rawErrorAnswer(error.status, errorEnvelope(error, docsUrl), retryAfter));
}

/** Takes the HTTP server's upgrades under the streams path; returns a function that closes every stream socket. */
export function acceptStreamUpgrades(server: Server, o: StreamUpgradeOptions): () => void {
  const base = new URL(o.streamsUrl).pathname.replace(/\/+$/, "") || "/streams";
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  const onUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const holder = o.forwarding && !wasForwarded(req) ? await holderOfTarget(o.forwarding, req, base) : undefined;
    if (holder) {
      forwardUpgrade(req, socket, head, holder, (error) => refuse(socket, error, o.docsUrl));
      return;
    }
    let grant: ViewerGrant;
    let release: () => void;
    try {
      grant = await admit(o, req, base);
      release = o.caps.acquire("signalling_websockets", grant.keyId, grant.accountId);
    } catch (error) {
      refuse(socket, error instanceof AssayError ? error : new AssayError("not_found", "no such stream"), o.docsUrl);
      return;
    }
    // A socket that dies before the upgrade completes frees its slot too.
    socket.once("close", release);
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.once("close", release);
      let lapsed = false;
      let end: ReturnType<typeof o.signalling.handle>;
      const binding = o.access.bind(grant, (reason) => {
        lapsed = true;
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: "error", message: `access to this live view ended: ${reason}` }));
        // A close reason may be at most 123 bytes; ours are ASCII and shorter, this keeps it so.
        const short = reason.slice(0, 120);
        if (end) end(ACCESS_LAPSED_CLOSE_CODE, short);
        else ws.close(ACCESS_LAPSED_CLOSE_CODE, short);
      });
      // bind never rejects (a store that cannot answer lapses the grant); unbinding waits for it.
      ws.once("close", () => void binding.then((unbind) => unbind()));
      // The session (its offer first: the browser says nothing before it) starts once the grant is bound
      // and checked again, so no picture goes out on a grant that lapsed while the viewer was admitted.
      void binding.then(() => {
        if (!lapsed && ws.readyState === ws.OPEN) end = o.signalling.handle(ws, grant.cellId);
      });
    });
  };
  // An upgrade that fails unexpectedly (the store did not answer) drops its socket; nothing leaks.
  const listener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void onUpgrade(req, socket, head).catch(() => socket.destroy());
  server.on("upgrade", listener);
  return () => {
    server.off("upgrade", listener);
    for (const client of wss.clients) client.terminate();
    wss.close();
  };
}
