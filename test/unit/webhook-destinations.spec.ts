/**
 * Webhook destinations (coordinator/webhooks/destination-policy.ts): internal addresses refused in
 * every spelling, at registration and on the address a delivery's socket resolves; loopback only
 * when the operator allows it; redirects never followed.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { refusedAddress, refusedUrl, vettedLookup } from "../../coordinator/webhooks/destination-policy.js";
import { postWebhook } from "../../coordinator/webhooks/post-webhook.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

const STRICT = { allowLoopback: false };
const DEMO = { allowLoopback: true };

describe("webhook destinations", () => {
  it("refuses loopback, private, link-local and reserved hosts in every spelling", () => {
    const internal = [
      "http://127.0.0.1/h", "http://0x7f000001/h", "http://2130706433/h", "http://127.1/h", "http://017700000001/h", "http://localhost/h", "http://LOCALHOST./h",
      "http://api.localhost/h", "http://[::1]/h", "http://[::ffff:127.0.0.1]/h", "http://0.0.0.0/h", "http://[::]/h",
      "http://10.1.2.3/h", "http://172.16.0.1/h", "http://192.168.1.1/h", "http://100.64.0.1/h", "http://169.254.169.254/latest/meta-data", "http://[fe80::1]/h",
      "http://[fd00::1]/h", "http://224.0.0.1/h", "http://metadata.google.internal/computeMetadata/v1",
    ];
    for (const url of internal) assert.ok(refusedUrl(url, STRICT), url);
    for (const url of ["https://hooks.example.com/assay", "http://93.184.216.34/h", "https://[2606:4700::1111]/h"]) assert.equal(refusedUrl(url, STRICT), undefined, url);
  });

  it("allows loopback, and only loopback, when the operator says so", () => {
    for (const url of ["http://127.0.0.1:9/h", "http://localhost/h", "http://[::1]/h"]) assert.equal(refusedUrl(url, DEMO), undefined, url);
    for (const url of ["http://10.0.0.1/h", "http://169.254.169.254/h", "http://192.168.0.10/h"]) assert.ok(refusedUrl(url, DEMO), url);
    assert.match(refusedAddress("::ffff:10.0.0.1", DEMO)!, /private/);
  });

  it("refuses on the address a name resolves to when the socket connects", async () => {
    const refused = await new Promise<NodeJS.ErrnoException | null>((resolve) => vettedLookup(STRICT)("localhost", { all: true }, (error) => resolve(error)));
    assert.equal(refused?.code, "EDESTINATIONREFUSED");
    assert.match(refused!.message, /localhost resolves to .* loopback/);
    const allowed = await new Promise<NodeJS.ErrnoException | null>((resolve) => vettedLookup(DEMO)("localhost", { all: true }, (error) => resolve(error)));
    assert.equal(allowed, null);
  });

  it("delivers without following a redirect, and refuses an internal destination before connecting", async () => {
    let hits = 0;
    const server = createServer((req, res) => {
      hits++;
      res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const status = await postWebhook(`http://127.0.0.1:${port}/hook`, {}, "{}", { policy: DEMO, timeoutMs: 2000, signal: new AbortController().signal });
      assert.equal(status, 302, "a 3xx is the answer, not a hop");
      assert.equal(hits, 1);
      await assert.rejects(postWebhook(`http://127.0.0.1:${port}/hook`, {}, "{}", { policy: STRICT, timeoutMs: 2000, signal: new AbortController().signal }), /destination refused: 127\.0\.0\.1 is a loopback address/);
      await assert.rejects(postWebhook(`http://localhost:${port}/hook`, {}, "{}", { policy: STRICT, timeoutMs: 2000, signal: new AbortController().signal }), /destination refused/);
      assert.equal(hits, 1, "nothing reached the receiver");
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

for (const engine of STORE_ENGINES) {
  describe(`webhook delivery fairness (${engine})`, () => {
    it("keeps a slow receiver's account to its own slots: another account's delivery goes out at once", async () => {
      const { openDatabase } = await import("../../coordinator/store/database.js");
      const { insertEndpoint } = await import("../../coordinator/webhooks/endpoints-repo.js");
      const { enqueueEvent } = await import("../../coordinator/webhooks/outbox.js");
      const { createWebhookWorker } = await import("../../coordinator/webhooks/delivery-worker.js");
      const db = await openTestDatabase(engine);
      for (const id of ["acct_slow", "acct_fast"]) await db.prepare("INSERT INTO accounts (id, name, created) VALUES (?, ?, '2026-01-01T00:00:00Z')").run(id, id);
      let slowInFlight = 0;
      let slowMost = 0;
      const held: Array<() => void> = [];
      const fastAt: number[] = [];
      const server = createServer((req, res) => {
        if (req.url === "/slow") {
          slowMost = Math.max(slowMost, ++slowInFlight);
          held.push(() => {
            slowInFlight--;
            res.writeHead(200).end();
          });
        } else {
          fastAt.push(performance.now());
          res.writeHead(200).end();
        }
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await insertEndpoint(db, "acct_slow", { url: `${base}/slow`, events: ["run.completed"], description: null }, new Date());
      await insertEndpoint(db, "acct_fast", { url: `${base}/fast`, events: ["run.completed"], description: null }, new Date());
      for (let i = 0; i < 12; i++) await enqueueEvent(db, "acct_slow", "run.completed", { i });
      await enqueueEvent(db, "acct_fast", "run.completed", { i: 0 });
      const worker = createWebhookWorker({ db, allowLoopback: true, pollMs: 10, timeoutMs: 60_000, concurrency: 8, perAccountConcurrency: 2, logger: { warn: () => undefined, error: () => undefined } });
      worker.start();
      try {
        // The slow receiver answers nothing until the end: the other account's delivery arriving at all shows it did not wait.
        while (fastAt.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        assert.equal(slowMost, 2, "the slow account holds two slots, not eight");
      } finally {
        for (const release of held.splice(0)) release();
        const stopping = worker.stop();
        // Deliveries taken after the release are answered at once too.
        const drain = setInterval(() => { for (const release of held.splice(0)) release(); }, 5);
        await stopping;
        clearInterval(drain);
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await db.close();
      }
    });
  });
}
