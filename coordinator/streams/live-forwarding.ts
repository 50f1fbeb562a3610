/**
 * Live views across coordinators. A cell's camera frames reach only the coordinator holding its
 * CellLink stream. A request that lands on another coordinator (a load balancer spreads them) is
 * passed to the holder: the stream descriptor, an MJPEG stream, and the WebRTC signalling
 * WebSocket. The holder authenticates the request again and decides who may watch, as if the
 * client had reached it directly. A forwarded request is marked, so it is never forwarded twice.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import type { Request, Response } from "express";
import { AssayError, errorEnvelope } from "../errors/assay-error.js";

/** Where a cell's live view is served, when that is another coordinator. */
export interface LiveForwarding {
  /** The base URL (http://host:port) of the coordinator holding the cell's stream, when it is another live one. */
  holderOf(cellId: string): Promise<string | undefined>;
  /** The cell running the run now, wherever its stream is held. */
  cellOfRun(runId: string): Promise<string | undefined>;
}

const FORWARDED = "x-assay-forwarded";

/** Whether the request was already passed on by another coordinator (then it is served here). */
export function wasForwarded(req: IncomingMessage): boolean {
  return req.headers[FORWARDED] !== undefined;
}

/** Passes an HTTP request to the holder and streams its answer back, status and headers included. */
export function forwardHttp(req: Request, res: Response, holderUrl: string, docsUrl: string): void {
  const target = new URL(req.originalUrl, holderUrl);
  const upstream = httpRequest(target, { method: req.method, headers: { ...req.headers, host: target.host, [FORWARDED]: "1" } }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on("error", (error) => {
    if (res.headersSent) return void res.end();
    const failure = new AssayError("not_found", `the coordinator holding this cell's stream did not answer (${error.message}); the cell may be moving to another coordinator, try again in a few seconds`);
    res.status(failure.status).json(errorEnvelope(failure, docsUrl));
  });
  // A viewer that goes away ends the upstream stream too.
  res.on("close", () => upstream.destroy());
  upstream.end();
}

/** Passes a WebSocket upgrade to the holder: its request line and headers, then both sockets piped. */
export function forwardUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, holderUrl: string, refuse: (error: AssayError) => void): void {
  const target = new URL(holderUrl);
  const upstream = connect(Number(target.port || 80), target.hostname);
  upstream.on("connect", () => {
    const headers = Object.entries({ ...req.headers, host: target.host, [FORWARDED]: "1" })
      .flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v) => `${name}: ${v}`));
    upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${headers.join("\r\n")}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
  });
  upstream.on("error", (error) => {
    if (upstream.bytesRead === 0 && socket.writable) {
      refuse(new AssayError("not_found", `the coordinator holding this cell's stream did not answer (${error.message}); try again in a few seconds`));
    } else socket.destroy();
  });
  socket.on("error", () => upstream.destroy());
  socket.on("close", () => upstream.destroy());
}
