/**
 * The coordinator's ETag function (coordinator/http/weak-etag.ts) gives the tag express's default
 * gives, byte for byte, for every kind of body `res.send` takes, and If-None-Match still answers 304.
 */
import assert from "node:assert/strict";
import { get } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { weakEtag } from "../../coordinator/http/weak-etag.js";

const BODIES: [string, (res: express.Response) => void][] = [
  ["a JSON object", (res) => void res.json({ id: "run_1", object: "run", note: "é \u2028 ✓", n: [1e21, 1e-7, -0] })],
  ["an empty string", (res) => void res.type("text/plain").send("")],
  ["a Latin-1 string", (res) => void res.type("text/plain").send("caf\u00e9")],
  ["a long string", (res) => void res.type("text/plain").send("x".repeat(70_000))],
  ["a Buffer", (res) => void res.send(Buffer.from([0, 1, 2, 255]))],
  ["an empty Buffer", (res) => void res.send(Buffer.alloc(0))],
];

async function serve(app: express.Express): Promise<{ url: string; close: () => void }> {
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

/** The status of a GET with If-None-Match (node:http: fetch would add Cache-Control: no-cache, which disables the check). */
function statusIfNoneMatch(url: string, etag: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { "if-none-match": etag } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    }).on("error", reject);
  });
}

function appWith(etag?: typeof weakEtag): express.Express {
  const app = express();
  if (etag) app.set("etag", etag);
  BODIES.forEach(([, send], i) => app.get(`/${i}`, (_req, res) => send(res)));
  return app;
}

describe("weakEtag: express's default ETag, made with one hash call", () => {
  it("tags every kind of body as express's default does, and answers If-None-Match with 304", async () => {
    const before = await serve(appWith());
    const after = await serve(appWith(weakEtag));
    try {
      for (const [i, [what]] of BODIES.entries()) {
        const expected = (await fetch(`${before.url}/${i}`)).headers.get("etag");
        const got = await fetch(`${after.url}/${i}`);
        assert.ok(expected, `express sent no ETag for ${what}`);
        assert.equal(got.headers.get("etag"), expected, what);
        assert.equal(await statusIfNoneMatch(`${after.url}/${i}`, expected), 304, what);
      }
    } finally {
      before.close();
      after.close();
    }
  });
});
