/**
 * Several coordinators on one PostgreSQL database and one bucket (issue 16): two coordinator
 * processes (scripts/start.ts, as a deployment runs them) share an embedded PostgreSQL and an
 * S3-compatible bucket (s3rver); two simulated cells each list both coordinators, in opposite
 * orders, so each coordinator holds one cell's stream.
 * Runs submitted on one coordinator are watched over SSE on the other; then one coordinator is
 * killed with SIGKILL mid-run, its cell fails over to the other, and the run completes with every
 * episode exactly once.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { WebSocket } from "ws";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { launchSimFleet, type SimFleet } from "../../simulators/fleet/launcher.js";
import { README_RUN_BODY } from "../fixtures.js";
import { eventually } from "../support/eventually.js";
import { freePort } from "../support/free-port.js";
import { waitForRunEnd } from "../support/run-end.js";
import { startS3Server, type S3Server } from "../support/s3-server.js";
import { freshPostgresUrl } from "../support/test-database.js";
import { TEST_ADMIN_KEY } from "./helpers.js";
import { startReceiver } from "./webhook-receiver.js";
import { nodeArgsFor } from "../../scripts/compiled-entry.mjs";

type Json = Record<string, any>;

const REPO = resolve(import.meta.dirname, "..", "..");
const CELLS = ["so101-b", "so101-c"];

interface CoordinatorProcess {
  name: string;
  http: number;
  grpc: number;
  child?: ChildProcess;
  base: string;
}

describe("several coordinators on one PostgreSQL database", function () {
  this.timeout(300_000);
  let dir: string;
  let databaseUrl: string;
  let bucket: S3Server;
  let operatorKey = "";
  let fleet: SimFleet | undefined;
  const coordinators: CoordinatorProcess[] = [];
  const output: string[] = [];

  async function start(coordinator: CoordinatorProcess): Promise<void> {
    const child = spawn(process.execPath, await nodeArgsFor(join(REPO, "scripts", "start.ts")), {
      cwd: REPO,
      env: {
        ...process.env, ASSAY_FLEET: "none", ASSAY_PORT: String(coordinator.http), ASSAY_GRPC_PORT: String(coordinator.grpc),
        ASSAY_DATA_DIR: join(dir, coordinator.name), ASSAY_DATABASE_URL: databaseUrl, ASSAY_API_KEY: TEST_ADMIN_KEY,
        ASSAY_ARTIFACTS_URL: `s3://${bucket.bucket}/scale`, AWS_ENDPOINT_URL_S3: bucket.endpoint, AWS_REGION: bucket.region,
        AWS_ACCESS_KEY_ID: bucket.credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: bucket.credentials.secretAccessKey,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    coordinator.child = child;
    let text = "";
    await new Promise<void>((done, fail) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        text += chunk.toString();
        output.push(`[${coordinator.name}] ${chunk}`);
        const operator = /operator key\s+(asy_live_\S+)/.exec(text);
        if (operator) operatorKey = operator[1]!;
        if (text.includes("simulated fleet: off")) done();
      });
      child.stderr!.on("data", (chunk: Buffer) => output.push(`[${coordinator.name}] ${chunk}`));
      child.once("exit", (code, signal) => fail(new Error(`coordinator ${coordinator.name} exited while starting (${signal ?? code}): ${output.join("")}`)));
    });
  }

  async function stop(coordinator: CoordinatorProcess, signal: NodeJS.Signals): Promise<void> {
    const child = coordinator.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    child.kill(signal);
    await exited;
  }

  /** An API call; a 429 (the polls below can outrun the per-key limit) waits its Retry-After and is sent again. */
  async function api(coordinator: CoordinatorProcess, path: string, init: { method?: string; json?: unknown; key?: string } = {}): Promise<{ status: number; body: Json }> {
    for (;;) {
      const res = await fetch(coordinator.base + path, {
        method: init.method ?? "GET",
        headers: { authorization: `Bearer ${init.key ?? TEST_ADMIN_KEY}`, ...(init.json !== undefined ? { "content-type": "application/json" } : {}) },
        body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
      });
      const body = (await res.json()) as Json;
      if (res.status !== 429) return { status: res.status, body };
      await sleep(1000 * Number(res.headers.get("retry-after") ?? 1));
    }
  }

  /** Each episode of the run once, done, and the Result's n from exactly those. */
  async function assertEveryEpisodeOnce(coordinator: CoordinatorProcess, runId: string, episodes: number): Promise<Json> {
    const run = (await api(coordinator, `/v1/runs/${runId}`)).body;
    assert.equal(run.status, "completed", JSON.stringify(run));
    const listed = (await api(coordinator, `/v1/runs/${runId}/episodes`)).body.data as Json[];
    assert.equal(listed.length, episodes);
    assert.deepEqual(listed.map((e) => e.index).sort((a, b) => a - b), [...Array(episodes).keys()]);
    assert.ok(listed.every((e) => e.outcome === "success" || e.outcome === "failure"), JSON.stringify(listed.map((e) => e.outcome)));
    return run;
  }

  before(async function () {
    this.timeout(120_000);
    dir = mkdtempSync(join(tmpdir(), "assay-scale-"));
    databaseUrl = await freshPostgresUrl();
    bucket = await startS3Server();
    for (const name of ["a", "b"]) {
      const http = await freePort();
      coordinators.push({ name, http, grpc: await freePort(), base: `http://127.0.0.1:${http}` });
    }
    // One after the other: the first start creates the keys and prints the operator key.
    for (const coordinator of coordinators) await start(coordinator);
    assert.match(operatorKey, /^asy_live_/);
    const [a, b] = coordinators;
    const tokens = new Map<string, string>();
    const pins = loadFirmwarePins();
    const launch = async (cell: string, order: CoordinatorProcess[]) =>
      launchSimFleet({
        cells: pins.installations.filter((i) => i.cell === cell),
        coordinatorAddress: order.map((c) => `127.0.0.1:${c.grpc}`),
        enroll: async (cellId, model) => {
          if (!tokens.has(cellId)) {
            const enrolled = await api(a!, "/v1/cells", { method: "POST", json: { cell_id: cellId, model }, key: operatorKey });
            assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
            tokens.set(cellId, enrolled.body.enrollment_token);
          }
          return tokens.get(cellId)!;
        },
        dataDir: join(dir, "cells"),
        speed: Number.POSITIVE_INFINITY,
        seed: 7,
        log: process.env.ASSAY_TEST_LOG ? (line) => console.log(line) : undefined,
      });
    const fleets = [await launch(CELLS[0]!, [a!, b!]), await launch(CELLS[1]!, [b!, a!])];
    fleet = {
      ...fleets[0]!,
      async stop() {
        await Promise.all(fleets.map((f) => f.stop()));
      },
    };
    // Each coordinator lists both cells, wherever their streams landed.
    for (const coordinator of coordinators) {
      await eventually(`coordinator ${coordinator.name} to list both cells`, async () => {
        const cells = (await api(coordinator, "/v1/cells", { key: operatorKey })).body.data as Json[];
        return CELLS.every((cell) => cells.some((c) => c.id === cell && c.connected === true));
      });
    }
  });

  after(async function () {
    this.timeout(60_000);
    await fleet?.stop();
    for (const coordinator of coordinators) await stop(coordinator, "SIGTERM");
    await bucket?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs the quick-start run submitted on one coordinator, watched over SSE on the other, and delivers its webhook once", async () => {
    const [a, b] = coordinators;
    // Both coordinators' delivery workers poll the one outbox; the receiver must get run.completed once.
    const receiver = await startReceiver(() => 200);
    const endpoint = await api(b!, "/v1/webhooks", { method: "POST", json: { url: receiver.url, events: ["run.completed"] } });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
    // Four episodes, not eight: each check below holds at any count, and both cells are idle when the run is queued
    // (each coordinator's scheduler is kicked through the store, with a pass every second besides), so each takes one.
    const episodes = 4;
    const submitted = await api(a!, "/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes } });
    assert.equal(submitted.status, 201, JSON.stringify(submitted.body));
    const end = await waitForRunEnd(b!.base, TEST_ADMIN_KEY, submitted.body.id);
    assert.equal(end.status, "completed");
    assert.equal(end.events.filter((e) => e.event === "episode").length, episodes, "every episode event reaches the other coordinator's SSE client");
    const run = await assertEveryEpisodeOnce(a!, submitted.body.id, episodes);
    assert.equal(run.result.n, episodes);
    // Both cells did work: each coordinator scheduled the cell it holds.
    const listed = (await api(b!, `/v1/runs/${submitted.body.id}/episodes`)).body.data as Json[];
    assert.deepEqual([...new Set(listed.map((e) => e.cell))].sort(), CELLS);
    try {
      // Once the delivery is recorded delivered, no coordinator's worker will send it again.
      let deliveries: Json[] = [];
      await eventually("run.completed to be recorded delivered", async () => {
        deliveries = (await api(a!, `/v1/webhooks/${endpoint.body.id}/deliveries`)).body.data as Json[];
        return deliveries.length > 0 && deliveries.every((d) => d.status === "delivered");
      });
      assert.deepEqual(deliveries.map((d) => [d.type, d.attempts]), [["run.completed", 1]]);
      assert.equal(receiver.received.filter((r) => r.rawBody.includes(submitted.body.id as string)).length, 1, "posted once, by one coordinator");
    } finally {
      await receiver.close();
    }
    // Every recording is in the bucket: either coordinator serves any of them (a redirect to a
    // presigned URL), whichever coordinator the cell uploaded it through.
    for (const episode of listed) {
      for (const coordinator of coordinators) {
        const url = new URL(episode.mcap_url as string);
        const res = await fetch(`${coordinator.base}${url.pathname}${url.search}`, { headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } });
        assert.equal(res.status, 200, `${episode.mcap_url} through ${coordinator.name}`);
        const bytes = Buffer.from(await res.arrayBuffer());
        assert.equal(bytes.subarray(0, 8).toString("latin1"), "\x89MCAP0\r\n", "an MCAP file");
      }
    }
  });

  it("runs a compare submitted on the second coordinator", async () => {
    const [a, b] = coordinators;
    const expert = README_RUN_BODY.policy;
    const novice = { ...expert, image: "assay/ref-policy:novice" };
    const submitted = await api(b!, "/v1/runs", {
      method: "POST",
      // Two pairs: the point is that a compare submitted on B is scheduled, run and ended through both
      // coordinators; nothing here depends on its episode count, and each novice failure costs a 20 s episode.
      json: { kind: "compare", robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", episodes: 2, policies: { expert, novice }, paired: true },
    });
    assert.equal(submitted.status, 201, JSON.stringify(submitted.body));
    const end = await waitForRunEnd(a!.base, TEST_ADMIN_KEY, submitted.body.id);
    assert.equal(end.status, "completed", JSON.stringify(end.run));
    assert.ok(end.run.result, "the compare has its result");
  });

  it("refuses a key revoked on one coordinator on the other as soon as the store's notification arrives", async () => {
    const [a, b] = coordinators;
    const created = await api(a!, "/v1/keys", { method: "POST", json: { scope: ["runs:read"] } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const key = created.body.secret as string;
    // B has verified (and so cached) the key before it is revoked.
    assert.equal((await api(b!, "/v1/keys/current", { key })).status, 200);
    assert.equal((await api(a!, `/v1/keys/${created.body.id}`, { method: "DELETE" })).status, 200);
    assert.equal((await api(a!, "/v1/keys/current", { key })).status, 401, "the revoking coordinator refuses the key on the next request");
    // B hears of it over LISTEN/NOTIFY; the deadline is far below the cache's 60 s backstop, so this is the notification.
    await eventually("B to refuse the revoked key", async () => (await api(b!, "/v1/keys/current", { key })).status === 401, { deadlineMs: 10_000 });
  });

  it("serves a cell's live view through the coordinator that does not hold its stream", async () => {
    const [, b] = coordinators;
    // The first cell lists A first, so A holds its stream; ask B.
    const descriptor = await api(b!, `/v1/streams/${CELLS[0]}`, { key: operatorKey });
    assert.equal(descriptor.status, 200, JSON.stringify(descriptor.body));
    const cameras = descriptor.body.cameras as Json[];
    // B has no frames of this cell: only A, answering the forwarded request, knows its cameras.
    assert.ok(cameras.length > 0, "the holder lists the cell's cameras");
    // Both URLs sent to B, wherever the descriptor points: B passes them to A.
    const viaB = (url: string) => {
      const parsed = new URL(url);
      return `${b!.base.replace(/^http/, parsed.protocol.startsWith("ws") ? "ws" : "http")}${parsed.pathname}${parsed.search}`;
    };
    const controller = new AbortController();
    const mjpeg = await fetch(viaB(cameras[0]!.mjpeg_url), { signal: controller.signal });
    assert.equal(mjpeg.status, 200);
    assert.match(mjpeg.headers.get("content-type") ?? "", /^multipart\/x-mixed-replace/);
    const reader = mjpeg.body!.getReader();
    let received = Buffer.alloc(0);
    while (!received.includes(Buffer.from([0xff, 0xd8, 0xff]))) received = Buffer.concat([received, Buffer.from((await reader.read()).value!)]);
    assert.match(received.toString("latin1"), /Content-Type: image\/jpeg/);
    controller.abort();
    await reader.cancel().catch(() => undefined);
    // The WebRTC signalling WebSocket is passed through too: it opens, and A answers on it.
    const socket = new WebSocket(viaB(descriptor.body.webrtc.url));
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
      socket.once("unexpected-response", (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
    });
    socket.close();
  });

  it("finishes a run whose coordinator is killed mid-run: its cell fails over, no episode lost or counted twice", async () => {
    const [a, b] = coordinators;
    const episodes = 12;
    const submitted = await api(b!, "/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes } });
    assert.equal(submitted.status, 201, JSON.stringify(submitted.body));
    const runId = submitted.body.id as string;
    await eventually("a few episodes to finish", async () => ((await api(b!, `/v1/runs/${runId}/episodes`)).body.data as Json[]).filter((e) => e.outcome).length >= 2);
    const doneBy = async (cell: string) => ((await api(b!, `/v1/runs/${runId}/episodes`)).body.data as Json[]).filter((e) => e.outcome && e.cell === cell).length;
    await stop(a!, "SIGKILL");
    // Measured after the kill: anything the killed coordinator acknowledged is already in the database.
    const beforeFailover = await doneBy(CELLS[0]!);
    const end = await waitForRunEnd(b!.base, TEST_ADMIN_KEY, runId);
    assert.equal(end.status, "completed", JSON.stringify(end.run));
    await assertEveryEpisodeOnce(b!, runId, episodes);
    assert.equal(end.run.result.n, episodes);
    // The cell whose coordinator died went on working through the other one.
    assert.ok((await doneBy(CELLS[0]!)) > beforeFailover, `${CELLS[0]} finished no episode after its coordinator was killed`);
    // The killed coordinator's cell now streams to the survivor.
    await eventually("both cells on the surviving coordinator", async () => {
      const cells = (await api(b!, "/v1/cells", { key: operatorKey })).body.data as Json[];
      return CELLS.every((cell) => cells.some((c) => c.id === cell && c.connected === true));
    });
  });
});

describe("coordinators starting together on an empty PostgreSQL database", function () {
  this.timeout(120_000);

  it("create the schema, the keys and the catalogue once, and all start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "assay-together-"));
    const databaseUrl = await freshPostgresUrl();
    const children: ChildProcess[] = [];
    try {
      const outputs = await Promise.all([1, 2, 3].map(async (i) => {
        const child = spawn(process.execPath, await nodeArgsFor(join(REPO, "scripts", "start.ts")), {
          cwd: REPO,
          env: {
            ...process.env, ASSAY_FLEET: "none", ASSAY_PORT: String(await freePort()), ASSAY_GRPC_PORT: String(await freePort()),
            ASSAY_DATA_DIR: join(dir, `c${i}`), ASSAY_DATABASE_URL: databaseUrl, ASSAY_API_KEY: TEST_ADMIN_KEY,
          },
          stdio: ["ignore", "pipe", "pipe"],
        });
        children.push(child);
        let text = "";
        await new Promise<void>((done, fail) => {
          child.stdout!.on("data", (chunk: Buffer) => {
            text += chunk.toString();
            if (text.includes("simulated fleet: off")) done();
          });
          child.stderr!.on("data", (chunk: Buffer) => (text += chunk.toString()));
          child.once("exit", (code, signal) => fail(new Error(`coordinator ${i} exited while starting (${signal ?? code}): ${text}`)));
        });
        return text;
      }));
      assert.equal(outputs.filter((text) => /operator key\s+asy_live_/.test(text)).length, 1, "one of them created the operator key");
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        const keys = await client.query("SELECT account_id, count(*)::int AS n FROM api_keys GROUP BY account_id ORDER BY account_id");
        assert.deepEqual(keys.rows.map((r) => r.n), keys.rows.map(() => 1), JSON.stringify(keys.rows));
        const tasks = await client.query("SELECT name, version, count(*)::int AS n FROM tasks GROUP BY name, version HAVING count(*) > 1");
        assert.deepEqual(tasks.rows, []);
      } finally {
        await client.end();
      }
    } finally {
      await Promise.all(children.map((child) => new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once("exit", () => done());
        child.kill("SIGTERM");
      })));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
