/**
 * Hostile HTTP against a real coordinator (loopback, no cells, bounded): slow clients, oversized
 * and malformed requests, floods of random paths, ranges past the end, a full database, keys
 * minted to multiply a rate limit, forged X-Forwarded-For, and too many connections from one
 * address. Issue 24 rows 5, 6, 11, 12 and 14; docs/security.md's controls table names each test.
 *
 * Other loopback addresses (127.0.0.2-4) stand for other machines: 127.0.0.2 is the configured
 * trusted proxy of the `guarded` coordinator.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { ACCOUNT_MULTIPLE } from "../../coordinator/api/rate-limit.js";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { SqliteDb } from "../../coordinator/store/database.js";
import { eventually } from "../support/eventually.js";
import { insertFixtureRun } from "../support/fixture-run.js";
import { testStoreOptions } from "../support/test-database.js";
import { startTestService, TEST_ADMIN_KEY, type TestService } from "./helpers.js";

const TRUSTED_PROXY = "127.0.0.2";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request on its own connection (no pooling), optionally from another loopback address. */
function send(base: string, path: string, options: { method?: string; headers?: Record<string, string>; localAddress?: string } = {}): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: options.method ?? "GET", headers: options.headers, localAddress: options.localAddress, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** What a raw socket received before it closed. */
interface RawOutcome {
  text: string;
}

/**
 * Opens a socket, writes `first`, then `trickle` every `everyMs` for as long as the socket lives (a
 * slowloris client keeps sending; half-open allowed, so the client never closes its side itself).
 * Resolves when the socket has closed: a server that destroys its side answers the next trickle
 * with a reset; one that merely half-closes never ends this (the test times out). Without a
 * trickle the client closes its side once the server has closed its own.
 */
function rawClient(port: number, first: string, trickle?: { text: string; everyMs: number }, localAddress?: string): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port, allowHalfOpen: true, localAddress });
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    socket.on("connect", () => {
      socket.write(first);
      if (trickle) timer = setInterval(() => socket.writable && socket.write(trickle.text), trickle.everyMs);
    });
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => {
      if (!trickle) socket.end();
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(timer);
      resolve({ text: Buffer.concat(chunks).toString("utf8") });
    });
  });
}

/** Status, headers (lower-cased names) and parsed body of a raw answer. */
function parseRaw(text: string): { status: number; headers: Record<string, string>; body: any } {
  const [head, body] = [text.slice(0, text.indexOf("\r\n\r\n")), text.slice(text.indexOf("\r\n\r\n") + 4)];
  const [statusLine, ...lines] = head.split("\r\n");
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
  return { status: Number(statusLine!.split(" ")[1]), headers, body: JSON.parse(body) };
}

function assertEnvelope(answer: { status: number; body: any; headers: Record<string, unknown> }, status: number, code: string): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.equal(answer.body.error.code, code);
  assert.equal(typeof answer.body.error.message, "string");
  assert.match(answer.body.error.doc_url, new RegExp(`/docs/errors#${code}$`));
  assert.equal(answer.headers["x-content-type-options"], "nosniff");
  assert.equal(answer.headers["x-frame-options"], "DENY");
}

describe("hostile HTTP: slow clients, floods, ranges, full disks, rate limits (loopback)", function () {
  this.timeout(120_000);

  describe("connection timeouts, raw answers and per-client rate limits", () => {
    let coordinator: RunningCoordinator;
    let dataDir: string;
    let port: number;
    const HEADERS_TIMEOUT_MS = 600;
    const REQUEST_TIMEOUT_MS = 1200;
    const KEY_BURST = 4;

    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), "assay-hostile-http-"));
      coordinator = await startCoordinator(compileCoordinatorOptions({
        port: 0, grpcPort: 0, dataDir, apiKey: TEST_ADMIN_KEY, ...(await testStoreOptions(dataDir)),
        connections: { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS, keepAliveTimeoutMs: 300 },
        trustedProxies: [TRUSTED_PROXY],
        // Refills too slow to matter within the test: every grant is counted.
        rateLimits: {
          general: { perS: 0.001, burst: KEY_BURST }, submit: { perS: 0.001, burst: 2 },
          anonymous: { perS: 0.001, burst: 2 }, anonymousRender: { perS: 0.001, burst: 1 },
          rejectedKeys: { perS: 0.001, burst: 3 },
        },
      }));
      port = coordinator.httpPort;
    });
    after(async () => {
      await coordinator?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("answers slowloris clients 408 with the envelope once the header timeout passes, and destroys their sockets", async () => {
      // 20 clients each sending a header line every 100 ms, never finishing the headers.
      const clients = Array.from({ length: 20 }, () => rawClient(port, "GET /v1/robots HTTP/1.1\r\nHost: assay\r\n", { text: "X-Slow: 1\r\n", everyMs: 100 }));
      for (const outcome of await Promise.all(clients)) {
        const answer = parseRaw(outcome.text);
        assertEnvelope(answer, 408, "contract_validation_failed");
        assert.match(answer.body.error.message, new RegExp(`headers must arrive within ${HEADERS_TIMEOUT_MS} ms`));
        assert.equal(answer.headers.connection, "close");
      }
    });

    it("answers a body that trickles in past the request timeout 408 and destroys the socket", async () => {
      const head = `POST /v1/runs HTTP/1.1\r\nHost: assay\r\nAuthorization: Bearer ${TEST_ADMIN_KEY}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"kind":`;
      const outcome = await rawClient(port, head, { text: " ", everyMs: 100 });
      const answer = parseRaw(outcome.text);
      assertEnvelope(answer, 408, "contract_validation_failed");
      assert.match(answer.body.error.message, new RegExp(`within ${REQUEST_TIMEOUT_MS} ms`));
    });

    it("answers oversized headers 431 and unparseable HTTP 400 with the envelope and the security headers", async () => {
      const big = parseRaw((await rawClient(port, `GET /v1/robots HTTP/1.1\r\nHost: assay\r\nX-Pad: ${"a".repeat(20_000)}\r\n\r\n`)).text);
      assertEnvelope(big, 431, "contract_validation_failed");
      assert.equal(big.headers["content-security-policy"], "default-src 'none'; frame-ancestors 'none'");
      const garbage = parseRaw((await rawClient(port, "NOT HTTP AT ALL\r\n\r\n")).text);
      assertEnvelope(garbage, 400, "contract_validation_failed");
    });

    it("closes an idle keep-alive connection by itself", async () => {
      // The client asks for keep-alive, reads its answer and then does nothing: the server ends it.
      const outcome = await rawClient(port, "GET /v1/leaderboards HTTP/1.1\r\nHost: assay\r\nConnection: keep-alive\r\n\r\n", undefined, "127.0.0.4");
      assert.match(outcome.text, /^HTTP\/1\.1 200 /);
      assert.match(outcome.text, /\r\nConnection: keep-alive\r\n/i);
    });

    it("gives six keys of one account one shared bucket: together no more than the account's allowance", async () => {
      await ensureAccount(coordinator.db, "acct_sixkeys", "Six keys", new Date().toISOString());
      const keys: string[] = [];
      for (let i = 0; i < 6; i++) keys.push((await createApiKey(coordinator.db, "acct_sixkeys", ["runs:read"], new Date())).secret);
      const granted: number[] = [];
      const refusals: string[] = [];
      for (const key of keys) {
        let ok = 0;
        for (let i = 0; i < KEY_BURST + 1; i++) {
          const answer = await send(coordinator.baseUrl, "/v1/robots", { headers: { authorization: `Bearer ${key}` } });
          if (answer.status === 200) ok++;
          else {
            assert.equal(answer.status, 429, answer.body);
            assert.ok(Number(answer.headers["retry-after"]) >= 1);
            refusals.push(JSON.parse(answer.body).error.message);
          }
        }
        granted.push(ok);
      }
      // One key alone gets its burst; six get the account's ACCOUNT_MULTIPLE bursts, not six.
      assert.equal(granted[0], KEY_BURST);
      assert.equal(granted.reduce((a, b) => a + b, 0), KEY_BURST * ACCOUNT_MULTIPLE, `granted per key: ${granted.join(", ")}`);
      assert.match(refusals[0]!, /for this key exceeded/);
      assert.ok(refusals.some((m) => /for this account, shared by all its keys/.test(m)), refusals.join("\n"));
    });

    it("refuses unknown keys from an address that sent too many, before reading the store; a verified key still works", async () => {
      await ensureAccount(coordinator.db, "acct_badkeys", "Bad keys", new Date().toISOString());
      const good = (await createApiKey(coordinator.db, "acct_badkeys", ["runs:read"], new Date())).secret;
      const robots = (key: string, localAddress: string) => send(coordinator.baseUrl, "/v1/robots", { headers: { authorization: `Bearer ${key}` }, localAddress });
      const guess = (i: number) => `asy_live_${"guess".padEnd(24, String(i))}`;
      assert.equal((await robots(good, "127.0.0.9")).status, 200, "a key verified before the guessing starts");
      // The bucket's three rejected lookups: each an ordinary 401.
      for (let i = 0; i < 3; i++) {
        const answer = await robots(guess(i), "127.0.0.9");
        assert.equal(answer.status, 401, answer.body);
        assert.match(JSON.parse(answer.body).error.message, /unknown API key/);
      }
      const refused = await robots(guess(3), "127.0.0.9");
      assert.equal(refused.status, 429, refused.body);
      assert.ok(Number(refused.headers["retry-after"]) >= 1);
      assert.equal(JSON.parse(refused.body).error.code, "rate_limited");
      assert.match(JSON.parse(refused.body).error.message, /unknown or revoked API key from this address \(0\.001\/s, burst 3\); check the key/);
      // The same bucket guards the other places a bearer key is read (here a camera stream), before the store is read.
      const stream = await send(coordinator.baseUrl, "/streams/cells/so101-x/cameras/top.mjpeg", { headers: { authorization: `Bearer ${guess(5)}` }, localAddress: "127.0.0.9" });
      assert.equal(stream.status, 429, stream.body);
      // The key verified before is answered from the coordinator's memory, not refused; other addresses have their own bucket.
      assert.equal((await robots(good, "127.0.0.9")).status, 200);
      assert.equal((await robots(guess(4), "127.0.0.10")).status, 401);
      // A malformed key costs no store read and is told what is wrong with it, whatever the bucket.
      const malformed = await robots("not-a-key", "127.0.0.9");
      assert.equal(malformed.status, 401);
      assert.match(JSON.parse(malformed.body).error.message, /malformed API key/);
    });

    it("keys anonymous limits on the client address: X-Forwarded-For counts only from a trusted proxy", async () => {
      const board = (forwardedFor: string | undefined, localAddress?: string) =>
        send(coordinator.baseUrl, "/v1/leaderboards", { headers: forwardedFor ? { "x-forwarded-for": forwardedFor } : {}, localAddress }).then((a) => a.status);
      // From 127.0.0.1 (not trusted) the header is ignored: three "clients" share the socket's bucket of 2.
      assert.deepEqual([await board("198.51.100.1"), await board("198.51.100.2"), await board("198.51.100.3")], [200, 200, 429]);
      // From the trusted proxy each forwarded client has its own bucket, and the proxy itself another.
      assert.deepEqual([await board("198.51.100.1", TRUSTED_PROXY), await board("198.51.100.1", TRUSTED_PROXY), await board("198.51.100.1", TRUSTED_PROXY)], [200, 200, 429]);
      assert.equal(await board("198.51.100.2", TRUSTED_PROXY), 200);
      // A client's forged entry left of what the proxy appended does not move it to another bucket.
      assert.equal(await board("203.0.113.50, 198.51.100.1", TRUSTED_PROXY), 429);
      assert.equal(await board(undefined, TRUSTED_PROXY), 200);
    });

    it("gives anonymous PDF reports a tighter bucket than anonymous reads", async () => {
      const pdf = () => send(coordinator.baseUrl, "/v1/leaderboards/lb_nope/entries/run_nope/report?format=pdf", { headers: { "x-forwarded-for": "198.51.100.9" }, localAddress: TRUSTED_PROXY });
      assert.equal((await pdf()).status, 404);
      const second = await pdf();
      assert.equal(second.status, 429);
      assert.match(JSON.parse(second.body).error.message, /1 PDF reports\/s \(burst 1\) without a key from this address/);
    });
  });

  describe("metrics, ranges, connections per address and a full disk", () => {
    let service: TestService;
    const MAX_CONNECTIONS = 16;

    before(async () => {
      service = await startTestService({
        rateLimits: { general: { perS: 100_000, burst: 100_000 }, submit: { perS: 100_000, burst: 100_000 } },
        connections: { maxConnectionsPerAddress: MAX_CONNECTIONS },
      });
    });
    after(async () => {
      await service?.stop();
    });

    it("keeps /metrics series bounded whatever paths arrive: thousands of random paths add none", async () => {
      const random = () => randomBytes(8).toString("hex");
      const noKey = { authorization: "" };
      const kinds = [
        () => service.api(`/docs/${random()}`, { headers: noKey }),
        () => service.api(`/v1/runs/run_${random()}`),
        () => service.api(`/${random()}/${random()}`, { headers: noKey }),
        () => service.api(`/artifacts/runs/run_${random()}/episodes/ep_${random()}/${random()}.mcap`, { headers: noKey }),
      ];
      const series = async () => {
        const text = await (await service.api("/metrics", { headers: noKey })).text();
        return text.split("\n").filter((line) => line.startsWith("assay_http_")).length;
      };
      for (const kind of kinds) await (await kind()).arrayBuffer();
      await series();
      const before = await series();
      // 2,000 requests, 8 at a time.
      let next = 0;
      const worker = async () => {
        while (next < 2000) {
          const kind = kinds[next++ % kinds.length]!;
          const res = await kind();
          assert.notEqual(res.status, 500);
          await res.arrayBuffer();
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      assert.equal(await series(), before, "series after 2,000 random paths");
      const text = await (await service.api("/metrics", { headers: noKey })).text();
      assert.match(text, /route="unmatched",status="404"/);
      assert.match(text, /route="\/v1\/runs\/:runId",status="404"/);
      assert.doesNotMatch(text, /route="\/docs\/[0-9a-f]{16}"/);
    });

    it("answers a range past the end 416 with the envelope and Content-Range, on recordings and on exports", async () => {
      const fixture = await insertFixtureRun(service.coordinator, join(service.dataDir, "artifacts"), "run_rangepast00000001", { episodes: 1 });
      const episode = fixture.episodes[0]!;
      const recording = `/artifacts/runs/run_rangepast00000001/episodes/${episode.episodeId}/${episode.mcap.fileName}`;
      const past = await service.api(recording, { headers: { range: "bytes=999999999-" } });
      assert.equal(past.headers.get("content-type"), "application/json; charset=utf-8");
      assertEnvelope({ status: past.status, body: await past.json(), headers: Object.fromEntries(past.headers) }, 416, "contract_validation_failed");
      assert.equal(past.headers.get("content-range"), `bytes */${episode.mcap.bytes}`);
      const first = await service.api(recording, { headers: { range: "bytes=0-9" } });
      assert.equal(first.status, 206);
      assert.equal((await first.arrayBuffer()).byteLength, 10);

      const created = (await (await service.api("/v1/runs/run_rangepast00000001/export", { method: "POST", json: { format: "mcap-bundle" } })).json()) as { id: string };
      await service.coordinator.archives.idle();
      const ready = (await (await service.api(`/v1/exports/${created.id}`)).json()) as { status: string; download_url: string };
      assert.equal(ready.status, "ready");
      const archive = await service.api(ready.download_url, { headers: { range: "bytes=999999999-" } });
      assertEnvelope({ status: archive.status, body: await archive.json(), headers: Object.fromEntries(archive.headers) }, 416, "contract_validation_failed");
      assert.match(archive.headers.get("content-range") ?? "", /^bytes \*\/\d+$/);
    });

    it("answers 429 to a connection over the per-address cap, and admits that address again once it closes some", async () => {
      const open: Socket[] = [];
      for (let i = 0; i < MAX_CONNECTIONS; i++) {
        const socket = connect({ host: "127.0.0.1", port: service.coordinator.httpPort, localAddress: "127.0.0.3" });
        socket.on("error", () => undefined);
        await new Promise((resolve) => socket.once("connect", resolve));
        open.push(socket);
      }
      try {
        const over = parseRaw((await rawClient(service.coordinator.httpPort, "", undefined, "127.0.0.3")).text);
        assertEnvelope(over, 429, "rate_limited");
        assert.equal(over.headers["retry-after"], "1");
        assert.match(over.body.error.message, new RegExp(`already holds ${MAX_CONNECTIONS} open connections`));
        // Another address is not affected.
        assert.equal((await send(service.coordinator.baseUrl, "/v1/leaderboards", { localAddress: "127.0.0.4" })).status, 200);
      } finally {
        for (const socket of open) socket.destroy();
      }
      // The server sees the closes on its own schedule: poll until the address is admitted again.
      await eventually("127.0.0.3 admitted again", async () => (await send(service.coordinator.baseUrl, "/v1/leaderboards", { localAddress: "127.0.0.3" }).catch(() => ({ status: 0 }))).status === 200, { deadlineMs: 20_000 });
    });

    it("answers 503 service_unavailable with Retry-After when the database is full, and recovers when space is back", async function () {
      if (!(service.coordinator.db instanceof SqliteDb)) this.skip(); // PostgreSQL's disk_full is covered in test/unit/errors.spec.ts
      const raw = service.coordinator.db.raw;
      // A real SQLITE_FULL: the file may not grow, and its free pages are used up by a filler table.
      raw.exec("CREATE TABLE test_disk_filler (b BLOB)");
      raw.pragma(`max_page_count = ${raw.pragma("page_count", { simple: true }) as number}`);
      const fill = raw.prepare("INSERT INTO test_disk_filler VALUES (zeroblob(?))");
      for (const size of [4000, 500]) {
        for (let i = 0; i < 100_000; i++) {
          try {
            fill.run(size);
          } catch (error) {
            assert.equal((error as { code?: string }).code, "SQLITE_FULL");
            break;
          }
        }
      }
      try {
        // New keys fill the keys table's last page; the next one needs a page the file cannot have.
        let answer: Response | undefined;
        for (let i = 0; i < 200; i++) {
          answer = await service.api("/v1/keys", { method: "POST", json: { scope: ["runs:read"] } });
          if (answer.status !== 201) break;
          await answer.arrayBuffer();
        }
        assert.ok(answer);
        assertEnvelope({ status: answer.status, body: await answer.json(), headers: Object.fromEntries(answer.headers) }, 503, "service_unavailable");
        assert.equal(answer.headers.get("retry-after"), "60");
      } finally {
        raw.pragma("max_page_count = 1073741823");
      }
      const recovered = await service.api("/v1/keys", { method: "POST", json: { scope: ["runs:read"] } });
      assert.equal(recovered.status, 201);
    });
  });
});
