/**
 * GET for specs that read large answers byte for byte (test/integration/large-listing*.spec.ts): through
 * node:http, on a connection of its own. fetch adds Cache-Control: no-cache (which turns If-None-Match off),
 * and the suite's fetch parses every JSON answer against the OpenAPI document in the test's process, which is
 * the coordinator's. A new connection each time: a test's own work (12 MB parses, expected lists built from the
 * store) can hold the process's loop for seconds under load, past the coordinator's 5 s keep-alive, and a
 * request sent on an idle connection as the server's overdue timer closes it fails with ECONNRESET.
 */
import { get, type IncomingHttpHeaders } from "node:http";

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: AsyncIterable<Buffer>;
}

/** GET `url` with `headers`; resolves when the answer's head has come, its body still to be read. */
export function rawGet(url: URL, headers: Record<string, string>): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers }, (res) => resolve({ status: res.statusCode!, headers: res.headers, body: res })).on("error", reject);
  });
}

/** The whole body as UTF-8 text. */
export async function textOf(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** Where two texts first differ, quoted around it, for a failure message that fits on a screen. */
export function firstDifference(got: string, want: string): string {
  let at = 0;
  while (at < got.length && got[at] === want[at]) at++;
  return `${got.length} vs ${want.length} characters; first difference at ${at}: got ${JSON.stringify(got.slice(Math.max(0, at - 80), at + 80))}, want ${JSON.stringify(want.slice(Math.max(0, at - 80), at + 80))}`;
}
