/**
 * A JSON answer made ready once and sent many times: its bytes, their length and their ETag, for a
 * body that is served again and again unchanged (GET /v1/runs/{run_id}: lifecycle/run-view-bodies.ts
 * remembers one per run). `sendPreparedJson` writes what `res.json(JSON.parse(text))` would, byte for
 * byte and header for header, in the same order (Content-Type, Content-Length, ETag), the same 304 on a
 * matching If-None-Match (express's own `req.fresh`) and no body for HEAD, without converting the text
 * to bytes and hashing them on every request (issue 29). When the response already has a Content-Type
 * or ETag, or the app's ETag function is not weakEtag, it hands the text to express's `res.send` as before.
 */
import type { Request, Response } from "express";
import { weakEtag } from "./weak-etag.js";

export interface PreparedJson {
  /** The JSON text as UTF-8 (JSON.stringify's output is well-formed, so it decodes back to the same text). */
  readonly bytes: Buffer;
  /** Content-Length, as the header's text. */
  readonly length: string;
  /** weakEtag of the bytes: what express would compute with the app's `etag` setting (app.ts). */
  readonly etag: string;
}

/** What `res.json` sends for an object whose JSON.stringify is `text`. */
export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

export function prepareJson(text: string): PreparedJson {
  const bytes = Buffer.from(text, "utf8");
  return { bytes, length: String(bytes.length), etag: weakEtag(bytes) };
}

/** `res.json` for a prepared body (see the file's comment for when it falls back to express's path). */
export function sendPreparedJson(req: Request, res: Response, body: PreparedJson): void {
  if (res.getHeader("Content-Type") !== undefined || res.getHeader("ETag") !== undefined || res.getHeader("Transfer-Encoding") !== undefined || req.app.get("etag fn") !== weakEtag) {
    if (res.getHeader("Content-Type") === undefined) res.set("Content-Type", "application/json");
    res.send(body.bytes.toString("utf8"));
    return;
  }
  res.setHeader("Content-Type", JSON_CONTENT_TYPE);
  res.setHeader("Content-Length", body.length);
  res.setHeader("ETag", body.etag);
  // req.fresh is false without either conditional header (the `fresh` package's first test): not asked then.
  if ((req.headers["if-none-match"] !== undefined || req.headers["if-modified-since"] !== undefined) && req.fresh) {
    // res.send's 304: the status, and no body headers but the tag.
    res.statusCode = 304;
    res.removeHeader("Content-Type");
    res.removeHeader("Content-Length");
    res.end();
    return;
  }
  if (req.method === "HEAD") res.end();
  else res.end(body.bytes);
}
