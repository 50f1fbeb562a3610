/**
 * The judge wire (docs/judges.md): hostile answers are judge failures with plain messages, the audit
 * sample is seeded and of the stated share, and the client bounds time and size against a real
 * server on port 0.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { callJudge } from "../../protocol/judge/judge-client.js";
import { inAuditSample, parseJudgeSpec } from "../../protocol/judge/judge-spec.js";
import { encodeJudgeRequest, JudgeError, JUDGE_MAX_REPLY_BYTES, parseJudgeVerdict } from "../../protocol/judge/judge-wire.js";

const failsWith = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (error: unknown) => error instanceof JudgeError && error.kind === "bad_reply" && pattern.test(error.message));

describe("judge wire: parsing the judge's answer", () => {
  it("reads a verdict, keeping a bounded reason", () => {
    assert.deepEqual(parseJudgeVerdict('{"success": true, "confidence": 0.93}'), { success: true, confidence: 0.93, reason: null });
    const long = parseJudgeVerdict(JSON.stringify({ success: false, confidence: 0, reason: "x".repeat(5000) }));
    assert.equal(long.reason?.length, 500);
  });

  it("refuses hostile answers, quoting what came", () => {
    failsWith(() => parseJudgeVerdict("<html>oops</html>"), /not JSON: "<html>oops<\/html>"/);
    failsWith(() => parseJudgeVerdict("[true, 0.9]"), /JSON object/);
    failsWith(() => parseJudgeVerdict("null"), /JSON object/);
    failsWith(() => parseJudgeVerdict('{"success": "yes", "confidence": 0.9}'), /"success" must be true or false; got "\\"yes\\""/);
    failsWith(() => parseJudgeVerdict('{"success": 1, "confidence": 0.9}'), /"success" must be true or false/);
    failsWith(() => parseJudgeVerdict('{"success": true}'), /"confidence" must be a number from 0 to 1; got "nothing"/);
    failsWith(() => parseJudgeVerdict('{"success": true, "confidence": 1.5}'), /got "1.5"/);
    failsWith(() => parseJudgeVerdict('{"success": true, "confidence": -0.1}'), /from 0 to 1/);
    failsWith(() => parseJudgeVerdict('{"success": true, "confidence": "0.9"}'), /from 0 to 1/);
    failsWith(() => parseJudgeVerdict('{"success": true, "confidence": 1e999}'), /from 0 to 1/);
    failsWith(() => parseJudgeVerdict(" ".repeat(JUDGE_MAX_REPLY_BYTES + 1)), /over the 65536 allowed/);
  });

  it("encodes each camera's frame as base64 and leaves oversized frames out, naming them", () => {
    const body = JSON.parse(encodeJudgeRequest({
      task: "pick-cube@v1", instruction: "pick up the cube", cell: "so101-a",
      frames: [{ camera: "top", width: 2, height: 1, jpeg: new Uint8Array([0xff, 0xd8, 0xff, 0xd9]) }, { camera: "wrist", width: 1, height: 1, jpeg: new Uint8Array(5 * 1024 * 1024) }],
    }));
    assert.deepEqual(body.frames, [{ camera: "top", width: 2, height: 1, jpeg_base64: "/9j/2Q==" }]);
    assert.equal(body.preflight, false);
    assert.match(body.omitted[0], /^wrist: 5242880 bytes/);
  });
});

describe("judge spec and the audit sample", () => {
  it("fills defaults and names the bad field", () => {
    assert.deepEqual(parseJudgeSpec({ url: "http://127.0.0.1:9/judge" }), { url: "http://127.0.0.1:9/judge", confidenceThreshold: 0.8, auditFraction: 0.1, timeoutMs: 10_000 });
    assert.equal(parseJudgeSpec(undefined), undefined);
    assert.throws(() => parseJudgeSpec({ url: "ftp://x" }), /judge\.url must be an http\(s\) URL/);
    assert.throws(() => parseJudgeSpec({ url: "http://x", audit_fraction: 2 }), /judge\.audit_fraction must be a number from 0 to 1; got 2/);
    assert.throws(() => parseJudgeSpec({ url: "http://x", timeout_s: 600 }), /timeout_s must be a number of seconds in \(0, 60\]/);
  });

  it("draws the same for every attempt of an episode, and audits about the stated share of episodes", () => {
    assert.equal(inAuditSample(12345, 0.3), inAuditSample(12345, 0.3));
    assert.equal(inAuditSample(7, 0), false);
    assert.equal(inAuditSample(7, 1), true);
    // Consecutive seeds, as a run's episodes have: the share is binomial(2000, 0.25), sd ~ 0.0097.
    let audited = 0;
    for (let seed = 1000; seed < 3000; seed++) if (inAuditSample(seed, 0.25)) audited++;
    assert.ok(Math.abs(audited / 2000 - 0.25) < 0.04, `${audited} of 2000 audited`);
    // A larger fraction audits a superset: raising the share never drops an episode from the sample.
    for (let seed = 0; seed < 200; seed++) if (inAuditSample(seed, 0.1)) assert.equal(inAuditSample(seed, 0.5), true);
  });
});

describe("judge client: time and size bounds against a real server", () => {
  let server: Server;
  let url: string;
  let reply: (res: import("node:http").ServerResponse) => void = () => undefined;
  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => reply(res));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/judge`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const request = { task: "t", instruction: null, cell: "c", frames: [] };
  const failure = async (kind: string, pattern: RegExp) => {
    await assert.rejects(callJudge(url, request, 300), (error: unknown) => error instanceof JudgeError && error.kind === kind && pattern.test(error.message));
  };

  it("returns the verdict of a judge that answers", async () => {
    reply = (res) => res.end('{"success": false, "confidence": 0.6, "reason": "cube on the table"}');
    assert.deepEqual(await callJudge(url, request, 2000), { success: false, confidence: 0.6, reason: "cube on the table" });
  });

  it("fails on a 5xx, a silent judge, an endless answer and an unreachable one", async () => {
    reply = (res) => {
      res.statusCode = 503;
      res.end("overloaded");
    };
    await failure("http_status", /answered HTTP 503: "overloaded"/);
    reply = () => undefined; // never answers
    await failure("timeout", /no answer within 300 ms/);
    reply = (res) => {
      res.write("x".repeat(JUDGE_MAX_REPLY_BYTES));
      res.end("y".repeat(10));
    };
    await failure("bad_reply", /longer than 65536 bytes/);
    reply = (res) => res.write('{"success": tr'); // starts, then stalls
    await failure("timeout", /no answer within 300 ms/);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await assert.rejects(callJudge(`http://127.0.0.1:${port}/judge`, request, 1000), (error: unknown) => error instanceof JudgeError && error.kind === "unreachable" && /connection refused/.test(error.message));
  });
});
