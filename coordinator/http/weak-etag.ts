/**
 * The ETag express puts on every body it sends (`res.send`, `res.json`): its default, the `etag`
 * package's weak tag `W/"<byte length, hex>-<SHA-1 of the bytes, base64, first 27 characters>"`,
 * byte for byte, made with the one-shot `crypto.hash` (Node 20.12 and later) instead of a
 * `createHash` object per answer. Clients keep revalidating with the tags they hold (304 on
 * If-None-Match as before); each JSON answer costs a native handle fewer (issue 29).
 */
import * as crypto from "node:crypto";

const sha1OneShot = (crypto as unknown as { hash?: (algorithm: string, data: Buffer, encoding: "base64") => string }).hash;

/** Express's `etag fn` setting: `body` as `res.send` hands it over (a Buffer, or a string in `encoding`). */
export function weakEtag(body: string | Buffer, encoding?: BufferEncoding): string {
  const bytes = typeof body === "string" ? Buffer.from(body, encoding) : body;
  const sha1 = sha1OneShot ? sha1OneShot("sha1", bytes, "base64") : crypto.createHash("sha1").update(bytes).digest("base64");
  return `W/"${bytes.length.toString(16)}-${sha1.slice(0, 27)}"`;
}
