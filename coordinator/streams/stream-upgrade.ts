/**
 * WebSocket upgrades under the streams URL (`<streams_url>/cells/<cell>` and `<streams_url>/runs/<run>`),
 * authenticated before the upgrade: the signed token in the URL (stream-tokens.ts), or a bearer key
 * with streams:read. A run's URL (the pilot's `stream_url`) resolves to the cell running the run at
 * connect time. Refusals are plain HTTP answers with the spec's error envelope, never an upgrade.
 * An admitted socket is handed to the WebRTC signalling (coordinator/streams/webrtc/).
 */
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { AssayError, errorEnvelope } from "../errors/assay-error.js";
import type { FleetView } from "../fleet/fleet-view.js";
import type { Db } from "../store/database.js";
import { mayWatch, streamViewerAccount, workOfCell } from "./stream-access.js";
import { runStreamTarget } from "./stream-tokens.js";
import { forwardUpgrade, wasForwarded, type LiveForwarding } from "./live-forwarding.js";

export interface SignallingHandler {
  handle(ws: WebSocket, cellId: string): void;
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
}

/** The cell a request may watch, or an AssayError saying why not. */
function admit(o: StreamUpgradeOptions, req: IncomingMessage, base: string): string {
  const url = new URL(req.url ?? "/", "http://local");
  const match = new RegExp(`^${base}/(cells|runs)/([^/]+)$`).exec(url.pathname);
  if (!match) throw new AssayError("not_found", `no stream at ${url.pathname}; stream URLs are ${base}/cells/<cell> (from GET /v1/streams/{cell}) or ${base}/runs/<run> (a pilot's stream_url)`);
  const [, kind, rawId] = match;
  const id = decodeURIComponent(rawId!);
  const target = kind === "cells" ? id : runStreamTarget(id);
  const accountId = streamViewerAccount(o.db, target, url.searchParams.get("token") ?? undefined, req.headers.authorization, o.now());
  let cellId = id;
  if (kind === "runs") {
    const running = o.fleet.connectedCells().find((c) => workOfCell(o.db, o.fleet, c.cellId)?.runId === id);
    if (!running) throw new AssayError("not_found", `run ${id} is not on a cell right now (queued, between episodes or ended); connect again while it runs`, { runId: id });
    cellId = running.cellId;
  }
  if (!mayWatch(o.db, o.fleet, o.operatorAccountId, accountId, cellId)) {
    throw new AssayError("not_found", `no stream ${JSON.stringify(cellId)}: no such cell, or it is not running your work now`);
  }
  return cellId;
}

/** The coordinator holding the stream a cells/ or runs/ URL names, when it is another one. */
function holderOfTarget(forwarding: LiveForwarding, req: IncomingMessage, base: string): string | undefined {
  const match = new RegExp(`^${base}/(cells|runs)/([^/]+)$`).exec(new URL(req.url ?? "/", "http://local").pathname);
  if (!match) return undefined;
  let id: string;
  try {
    id = decodeURIComponent(match[2]!);
  } catch {
    return undefined;
  }
  const cellId = match[1] === "cells" ? id : forwarding.cellOfRun(id);
  return cellId === undefined ? undefined : forwarding.holderOf(cellId);
}

function refuse(socket: Duplex, error: AssayError, docsUrl: string): void {
  const body = JSON.stringify(errorEnvelope(error, docsUrl));
  socket.end(`HTTP/1.1 ${error.status} ${error.code}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** Takes the HTTP server's upgrades under the streams path; returns a function that closes every stream socket. */
export function acceptStreamUpgrades(server: Server, o: StreamUpgradeOptions): () => void {
  const base = new URL(o.streamsUrl).pathname.replace(/\/+$/, "") || "/streams";
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const holder = o.forwarding && !wasForwarded(req) ? holderOfTarget(o.forwarding, req, base) : undefined;
    if (holder) {
      forwardUpgrade(req, socket, head, holder, (error) => refuse(socket, error, o.docsUrl));
      return;
    }
    let cellId: string;
    try {
      cellId = admit(o, req, base);
    } catch (error) {
      refuse(socket, error instanceof AssayError ? error : new AssayError("not_found", "no such stream"), o.docsUrl);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => o.signalling.handle(ws, cellId));
  };
  server.on("upgrade", onUpgrade);
  return () => {
    server.off("upgrade", onUpgrade);
    for (const client of wss.clients) client.terminate();
    wss.close();
  };
}
