/**
 * A JSON list answer (`{"object":"list","url":...,"data":[...]}`) written a page at a time, for lists too
 * large to build and stringify in one turn of the event loop. The bytes are what `res.json` sends for the
 * whole object (JSON.stringify with no replacer or spaces, as the app is configured), so a client cannot
 * tell the two apart except by the headers: no Content-Length (chunked) and no ETag, since the tag is a hash
 * of the whole body and the headers go out before it is read.
 *
 * Between pages the writer waits for the socket to drain when it is full and always yields a turn of the
 * event loop (setImmediate), so other requests are served in between. A client that goes away stops the
 * listing: no further page is pulled (the page source's `finally` runs). An error after the headers went
 * out can no longer become the error envelope: the socket is destroyed, so the client sees a truncated
 * chunked answer (never a well-formed partial list), and the error is logged.
 */
import type { Request, Response } from "express";
import { nextTurn } from "../async/next-turn.js";
import { JSON_CONTENT_TYPE } from "./prepared-json.js";

/** The list's fields before `data`, as the spec has them. */
export interface ListHead {
  object: "list";
  url: string;
}

/**
 * Writes `head` and the items of `pages`, pulled one page at a time, as one JSON list; resolves when the
 * answer ended or the client went away. Throws only when nothing was written yet (the caller's error
 * handler then answers with the envelope); later errors go to `log` and destroy the socket.
 */
export async function writeJsonList(req: Request, res: Response, head: ListHead, pages: AsyncIterable<readonly unknown[]>, log: (message: string, error: unknown) => void): Promise<void> {
  let gone = false;
  const onClose = () => {
    gone = true;
  };
  res.once("close", onClose);
  const pulled = pages[Symbol.asyncIterator]();
  let first = true;
  try {
    res.status(200).setHeader("Content-Type", JSON_CONTENT_TYPE);
    for (;;) {
      const next = await pulled.next();
      if (gone) break;
      if (next.done) {
        res.end(first ? `${JSON.stringify(head).slice(0, -1)},"data":[]}` : "]}");
        break;
      }
      if (req.method === "HEAD") {
        // No body for HEAD (Node drops it anyway): the headers are the answer; read no further.
        res.end();
        break;
      }
      const items = next.value;
      if (items.length > 0) {
        // JSON.stringify of the page, brackets stripped: the items exactly as in the whole list's text.
        const text = JSON.stringify(items).slice(1, -1);
        const chunk = first ? `${JSON.stringify(head).slice(0, -1)},"data":[${text}` : `,${text}`;
        first = false;
        if (!res.write(chunk)) await drainedOrClosed(res);
        if (gone) break;
      }
      // A turn of the event loop between pages, full socket or not: other requests run here.
      await nextTurn();
      if (gone) break;
    }
  } catch (error) {
    if (!res.headersSent) throw error;
    // NOTE: the status line and part of the list are out; an envelope now would be appended to a list. Destroying
    // the socket leaves the chunked body unterminated, which every HTTP client reports as a truncated answer.
    log(`${req.method} ${req.originalUrl}: the listing failed after its first bytes were sent; the connection is closed so the client sees a truncated answer`, error);
    res.destroy();
  } finally {
    res.off("close", onClose);
    // Stops the page source when the loop left early (client gone, error): its reads end with it.
    await pulled.return?.();
  }
}

/** Resolves on 'drain', or when the response closed or failed first (a 'drain' then never comes). */
export function drainedOrClosed(res: Response): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      res.off("error", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
    res.on("error", done);
  });
}
