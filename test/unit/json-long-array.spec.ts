/**
 * writeJsonWithLongArray (http/json-list-stream.ts), behind a real express app on port 0 configured as the API's is
 * for JSON: the streamed answer is byte for byte what res.json sends for the same value (key order, a nested path,
 * strings that need escaping, an empty array, an array of one page and of several), a turn of the event loop passes
 * between pages, HEAD gets the headers alone, and a path that is not an array is an error before anything is written.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { writeJsonWithLongArray } from "../../coordinator/http/json-list-stream.js";

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

describe("a JSON answer with one long array written a page at a time", () => {
  let server: ReturnType<express.Express["listen"]>;
  let base: string;
  let value: Record<string, unknown> = {};
  let path: string[] = [];
  let turns = 0;

  before(async () => {
    const app = express();
    app.get("/whole", (_req, res) => void res.json(value));
    app.get("/paged", async (req, res, next) => {
      // Counts the turns of the event loop while the answer is written.
      let counting = true;
      const tick = () => {
        turns++;
        if (counting) setImmediate(tick);
      };
      turns = 0;
      setImmediate(tick);
      try {
        await writeJsonWithLongArray(req, res, value, path, () => undefined);
      } catch (error) {
        next(error);
      } finally {
        counting = false;
      }
    });
    app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(500).json({ error: error.message }));
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const call = (method: string, route: string) => new Promise<Answer>((resolve, reject) => {
    request(`${base}${route}`, { method, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    }).on("error", reject).end();
  });

  const items = (n: number) => Array.from({ length: n }, (_, i) => ({ episode: i, lighting: i % 2 ? "dim" : "nominal", note: i % 7 === 0 ? 'a "quote", a \\ and \u2028 and é' : null }));

  for (const [what, n] of [["no items", 0], ["one page", 3], ["several pages", 1_234]] as const) {
    it(`sends res.json's bytes: ${what}`, async () => {
      value = { object: "report", run_id: "run_x", perturbation_schedule: { requested: null, summary: { lighting: { dim: 1 } }, realized: items(n) }, stages: {}, cost: { usd: 0.1 } };
      path = ["perturbation_schedule", "realized"];
      const whole = await call("GET", "/whole");
      const paged = await call("GET", "/paged");
      assert.equal(paged.status, 200);
      assert.equal(paged.body, whole.body);
      assert.equal(paged.headers["content-type"], whole.headers["content-type"]);
      assert.equal(paged.headers.etag, undefined, "no tag: the headers go out before the whole body is known");
      if (n > 1_000) assert.ok(turns >= 3, `${turns} turns of the event loop while ${n} items were written`);
    });
  }

  it("sends the array at the top level too, and only the headers to HEAD", async () => {
    value = { data: items(600), after: "the end" };
    path = ["data"];
    assert.equal((await call("GET", "/paged")).body, (await call("GET", "/whole")).body);
    const head = await call("HEAD", "/paged");
    assert.equal(head.status, 200);
    assert.equal(head.body, "");
  });

  it("refuses a path that is not an array before writing anything", async () => {
    value = { report: { realized: "not a list" } };
    path = ["report", "realized"];
    const answer = await call("GET", "/paged");
    assert.equal(answer.status, 500);
    assert.deepEqual(JSON.parse(answer.body), { error: "writeJsonWithLongArray: report.realized is not an array" });
  });
});
