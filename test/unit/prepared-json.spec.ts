/**
 * sendPreparedJson (coordinator/http/prepared-json.ts), how GET /v1/runs/{run_id} writes a remembered
 * view: the raw answer, status line, headers in their order and body, is the one `res.json` gives in an
 * app with the coordinator's ETag function, for GET and HEAD, with and without a matching If-None-Match
 * (304), with Cache-Control: no-cache, and when a Content-Type was set before (express's path then).
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import express from "express";
import { prepareJson, sendPreparedJson } from "../../coordinator/http/prepared-json.js";
import { weakEtag } from "../../coordinator/http/weak-etag.js";

const BODIES: unknown[] = [
  { id: "run_1", object: "run", note: "é \u2028 ✓", n: [1e21, 1e-7, -0] },
  { id: "run_2", result: null, units: [] },
  [],
];

/** An app serving BODIES[i] at /i: with res.json, or prepared; `typed` sets a Content-Type first. */
function appWith(prepared: boolean, typed = false): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", weakEtag);
  const answers = BODIES.map((body) => prepareJson(JSON.stringify(body)));
  app.get("/:i", (req, res) => {
    res.setHeader("Cache-Control", "no-store");
    if (typed) res.type("application/vnd.test+json");
    const i = Number(req.params.i);
    if (prepared) sendPreparedJson(req, res, answers[i]!);
    else res.json(BODIES[i]);
  });
  return app;
}

async function rawAnswer(app: express.Express, request: string): Promise<string> {
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  try {
    return await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect((server.address() as AddressInfo).port, "127.0.0.1", () => socket.write(request));
      socket.on("data", (chunk: Buffer) => chunks.push(chunk));
      socket.on("error", reject);
      socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1").replace(/\r\nDate: [^\r]*/, "\r\nDate: -")));
    });
  } finally {
    server.close();
  }
}

describe("sendPreparedJson: a prepared JSON answer written as res.json writes it", () => {
  it("gives res.json's raw answer for GET, HEAD, If-None-Match and no-cache, and with a Content-Type set before", async () => {
    for (const [i, body] of BODIES.entries()) {
      const etag = weakEtag(Buffer.from(JSON.stringify(body)));
      const requests: [string, string[]][] = [
        ["GET", []], ["HEAD", []], ["GET", [`If-None-Match: ${etag}`]], ["HEAD", [`If-None-Match: ${etag}`]],
        ["GET", ["If-None-Match: *"]], ["GET", ['If-None-Match: W/"1-x", ' + etag.slice(2)]], ["GET", ['If-None-Match: W/"1-x"']],
        ["GET", [`If-None-Match: ${etag}`, "Cache-Control: no-cache"]],
      ];
      for (const [method, headers] of requests) {
        const request = `${method} /${i} HTTP/1.1\r\nHost: test\r\n${headers.map((h) => `${h}\r\n`).join("")}Connection: close\r\n\r\n`;
        for (const typed of [false, true]) {
          const expected = await rawAnswer(appWith(false, typed), request);
          assert.match(expected, /^HTTP\/1\.1 (200|304) /);
          assert.equal(await rawAnswer(appWith(true, typed), request), expected, `${method} ${headers.join(", ")} of body ${i}${typed ? " (typed)" : ""}`);
        }
      }
    }
  });
});
