/**
 * Error answers written straight on a socket, outside express: requests Node's HTTP parser refuses
 * (api/client-errors.ts), connections over a cap (api/connection-guard.ts). They carry the same
 * envelope and the same security headers as express answers, and the socket is destroyed once the
 * answer is written: a half-closed socket stays held for as long as the client keeps its side open.
 */
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { SECURITY_HEADERS } from "./security-headers.js";

/** How long a refused client gets to take the answer before the socket is destroyed regardless. */
const FLUSH_GRACE_MS = 1000;

/** The bytes of an HTTP/1.1 answer with a JSON envelope, the security headers and `Connection: close`. */
export function rawErrorAnswer(status: number, envelope: unknown, extraHeaders: Record<string, string> = {}): string {
  const body = JSON.stringify(envelope);
  const headers: Record<string, string> = {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(body)),
    "Cache-Control": "no-store",
    ...SECURITY_HEADERS,
    ...extraHeaders,
    Connection: "close",
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\n${lines}\r\n${body}`;
}

/** Writes `answer` and destroys the socket once it is flushed (or after a short grace, if the client does not read). */
export function answerAndDestroy(socket: Duplex, answer: string): void {
  const timer = setTimeout(() => socket.destroy(), FLUSH_GRACE_MS);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
  socket.end(answer, () => socket.destroy());
}
