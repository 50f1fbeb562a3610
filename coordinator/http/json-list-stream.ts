/**
 * A JSON list answer (`{"object":"list","url":...,"data":[...]}`) written a page at a time, for lists too
 * large to build and stringify in one turn of the event loop; and any JSON answer whose one long array is
 * written so (writeJsonWithLongArray: a report's entry per episode). The bytes are what `res.json` sends for the
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
  await writeJsonAround(req, res, `${JSON.stringify(head).slice(0, -1)},"data":[`, pages, "]}", log, "listing");
}

/**
 * Writes `value` as res.json would (the same bytes), the long array at `path` (a chain of object keys) a page of
 * PAGE_ITEMS at a time with a turn of the event loop between pages, the rest of the object stringified once. For an
 * answer with one part that grows with a run (a report's entry per episode). Errors as writeJsonList's.
 */
export async function writeJsonWithLongArray(req: Request, res: Response, value: object, path: readonly string[], log: (message: string, error: unknown) => void): Promise<void> {
  const items = path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], value);
  if (!Array.isArray(items)) throw new Error(`writeJsonWithLongArray: ${path.join(".")} is not an array`);
  // The array's place in the text: a string no value of ours holds (JSON escapes its NULs), put where the array was.
  const text = JSON.stringify(withValueAt(value, path, ARRAY_PLACE));
  const place = JSON.stringify(ARRAY_PLACE);
  const at = text.indexOf(place);
  await writeJsonAround(req, res, `${text.slice(0, at)}[`, pagesOf(items), `]${text.slice(at + place.length)}`, log, "answer");
}

const ARRAY_PLACE = "\u0000assay: a long array is written here\u0000";
/** Items of an in-memory array per page of writeJsonWithLongArray. */
const PAGE_ITEMS = 500;

async function* pagesOf(items: readonly unknown[]): AsyncIterable<readonly unknown[]> {
  for (let i = 0; i < items.length; i += PAGE_ITEMS) yield items.slice(i, i + PAGE_ITEMS);
}

/** A copy of `value` with `replacement` at `path`, every object on the way copied with its keys in their order. */
function withValueAt(value: unknown, path: readonly string[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [key, ...rest] = path as [string, ...string[]];
  const object = value as Record<string, unknown>;
  return { ...object, [key]: withValueAt(object[key], rest, replacement) };
}

/**
 * Writes `prefix`, the items of `pages` (comma-separated, each as JSON.stringify writes it inside an array) and
 * `suffix`; nothing is written before the first page has been pulled, so a source that fails at once leaves the
 * answer to the caller's error handler.
 */
async function writeJsonAround(req: Request, res: Response, prefix: string, pages: AsyncIterable<readonly unknown[]>, suffix: string, log: (message: string, error: unknown) => void, what: string): Promise<void> {
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
        res.end(first ? `${prefix}${suffix}` : suffix);
        break;
      }
      if (req.method === "HEAD") {
        // No body for HEAD (Node drops it anyway): the headers are the answer; read no further.
        res.end();
        break;
      }
      const items = next.value;
      if (items.length > 0) {
        // JSON.stringify of the page, brackets stripped: the items exactly as in the whole array's text.
        const text = JSON.stringify(items).slice(1, -1);
        const chunk = first ? `${prefix}${text}` : `,${text}`;
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
    // NOTE: the status line and part of the answer are out; an envelope now would be appended to it. Destroying
    // the socket leaves the chunked body unterminated, which every HTTP client reports as a truncated answer.
    log(`${req.method} ${req.originalUrl}: the ${what} failed after its first bytes were sent; the connection is closed so the client sees a truncated answer`, error);
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
