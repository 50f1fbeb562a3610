/**
 * Hostile use of live views (issue 24, rows 3, 4 and 10), over real HTTP, WebSocket and gRPC on
 * loopback: a scripted cell (test/support/scripted-agent.ts) plays episodes of two accounts' runs and
 * sends camera frames on its LiveFeed call, each frame's bytes naming the run it was captured for, so
 * a test can tell whose frames a viewer got.
 *
 * - A viewer of account A (MJPEG and a WebRTC signalling WebSocket) is closed when A's run ends and
 *   never receives a frame of account E's run that follows on the cell.
 * - A key without streams:read gets nothing from a run's events that opens a live view.
 * - MJPEG viewers, signalling WebSockets and event streams are capped per key and per account:
 *   the next one is refused 429 rate_limited (the error envelope, Retry-After) before it starts.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ClientWritableStream } from "@grpc/grpc-js";
import { WebSocket } from "ws";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import type { RunEvent } from "../../coordinator/runs/run-events.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { ensureAccount, DEFAULT_ACCOUNT_ID } from "../../coordinator/store/accounts-repo.js";
import { signStreamToken } from "../../coordinator/auth/stream-tokens.js";
import { ACCESS_LAPSED_CLOSE_CODE } from "../../coordinator/streams/stream-upgrade.js";
import type { AssignEpisode, LiveFeedEnd, LiveMessage } from "../../protocol/gen/cell.js";
import { README_RUN_BODY } from "../fixtures.js";
import { eventually } from "../support/eventually.js";
import { readSse } from "../support/sse.js";
import { ScriptedAgent } from "../support/scripted-agent.js";
import { testStoreOptions } from "../support/test-database.js";
import { TEST_ADMIN_KEY, waitForRunEnd } from "./helpers.js";

type Json = Record<string, any>;

const CELL = "so101-b";
const OTHER_ACCOUNT = "acct_hostile_e";
/** Small caps, so the tests reach them with a few connections (the defaults are 10 per key, 30 per account). */
const CAPS = {
  mjpeg_viewers: { perKey: 3, perAccount: 5 },
  signalling_websockets: { perKey: 2, perAccount: 3 },
  event_streams: { perKey: 3, perAccount: 4 },
};

/** An MJPEG response read part by part as it arrives; `ended` settles when the server ends it. */
class MjpegReader {
  readonly parts: string[] = [];
  readonly ended: Promise<void>;
  private readonly waiters: Array<() => void> = [];
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  done = false;

  constructor(response: Response) {
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type")!, /^multipart\/x-mixed-replace; boundary=assayframe/);
    this.reader = response.body!.getReader();
    this.ended = this.pump();
  }

  private async pump(): Promise<void> {
    let buffer = Buffer.alloc(0);
    try {
      for (;;) {
        const { value, done } = await this.reader.read();
        if (done) break;
        buffer = Buffer.concat([buffer, Buffer.from(value)]);
        for (;;) {
          const header = /Content-Length: (\d+)\r\n(?:[^\r\n]+\r\n)*\r\n/.exec(buffer.toString("latin1"));
          if (!header) break;
          const start = header.index + header[0].length;
          const length = Number(header[1]);
          if (buffer.length < start + length) break;
          this.parts.push(buffer.subarray(start, start + length).toString("latin1"));
          buffer = buffer.subarray(start + length);
          for (const wake of this.waiters.splice(0)) wake();
        }
      }
    } catch {
      // cancelled by the test, or the connection cut: either way the stream is over
    }
    this.done = true;
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves once a part equal to `label` has arrived; rejects if the stream ends first. */
  async frame(label: string): Promise<void> {
    while (!this.parts.includes(label)) {
      if (this.done) throw new Error(`the MJPEG stream ended before frame ${label}; got ${JSON.stringify(this.parts)}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async cancel(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }
}

/** A signalling WebSocket: its messages, and how it closed. */
interface Signalling {
  ws: WebSocket;
  messages: Json[];
  offer: Promise<Json>;
  closed: Promise<{ code: number; reason: string }>;
}

function openSignalling(url: string): Promise<Signalling> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const messages: Json[] = [];
    let gotOffer: (offer: Json) => void;
    const offer = new Promise<Json>((r) => (gotOffer = r));
    const closed = new Promise<{ code: number; reason: string }>((r) => ws.on("close", (code, reason) => r({ code, reason: reason.toString() })));
    ws.on("message", (data) => {
      const message = JSON.parse(data.toString()) as Json;
      messages.push(message);
      if (message.type === "offer") gotOffer(message);
    });
    ws.on("open", () => resolve({ ws, messages, offer, closed }));
    ws.on("unexpected-response", (_req, res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => reject(Object.assign(new Error(`upgrade refused ${res.statusCode}`), { status: res.statusCode, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString()) })));
    });
    ws.on("error", (error) => reject(error));
  });
}

/** The refusal of an upgrade, for an assertion. */
async function refusedUpgrade(url: string): Promise<{ status: number; headers: Record<string, string>; body: Json }> {
  try {
    const opened = await openSignalling(url);
    opened.ws.terminate();
    throw new Error(`the upgrade to ${url} was admitted`);
  } catch (error) {
    if (!(error as { status?: number }).status) throw error;
    return error as { status: number; headers: Record<string, string>; body: Json };
  }
}

describe("hostile streams: live views bound to their grant, and capped (scripted cell, loopback)", function () {
  this.timeout(120_000);
  let dir: string;
  let coordinator: RunningCoordinator;
  let agent: ScriptedAgent;
  let feed: ClientWritableStream<LiveMessage>;
  let feedSeq = 0;
  let heartbeats: ReturnType<typeof setInterval> | undefined;
  /** The episode the scripted cell is running, for its heartbeats. */
  let running = "";
  const closeAfter: Array<() => unknown> = [];

  const api = (path: string, key = TEST_ADMIN_KEY, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${key}`);
    if (init.json !== undefined) headers.set("content-type", "application/json");
    return fetch(coordinator.baseUrl + path, { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
  };
  const json = async (res: Response, status: number): Promise<Json> => {
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, JSON.stringify(body));
    return body;
  };
  const key = (accountId: string, scope: Parameters<typeof createApiKey>[2]) => createApiKey(coordinator.db, accountId, scope, new Date());
  /** Sends a frame of the top camera whose bytes are `label`. */
  const sendFrame = (label: string) => {
    feed.write({ frame: { camera: "top", width: 64, height: 48, jpeg: Buffer.from(label, "latin1"), capturedAtMs: Date.now(), seq: ++feedSeq } });
  };
  const started = async (assign: AssignEpisode) => {
    running = assign.episodeId;
    await agent.started(assign);
  };
  const finished = async (assign: AssignEpisode) => {
    await agent.finished(assign, "success");
    running = "";
  };
  /** Submits a one-episode run for `key` and has the cell start it; returns the run id and the assignment. */
  const startRunOnCell = async (runKey: string): Promise<{ runId: string; assign: AssignEpisode }> => {
    const run = await json(await api("/v1/runs", runKey, { method: "POST", json: { ...README_RUN_BODY, episodes: 1 } }), 201);
    const assign = await agent.next((m) => m.assignEpisode);
    await started(assign);
    return { runId: run.id as string, assign };
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-hostile-streams-"));
    coordinator = await startCoordinator(compileCoordinatorOptions({
      port: 0, grpcPort: 0, dataDir: dir, apiKey: TEST_ADMIN_KEY, ...(await testStoreOptions(dir)),
      rateLimits: { general: { perS: 1000, burst: 1000 }, submit: { perS: 1000, burst: 1000 } },
      connectionCaps: CAPS,
      // Far beyond the tests' length: whatever closes a view here is the event that changed its grant, not the backstop.
      liveRecheckMs: 10 * 60_000,
    }));
    await ensureAccount(coordinator.db, OTHER_ACCOUNT, "Account E", new Date().toISOString());
    agent = new ScriptedAgent(coordinator.grpcAddress, await coordinator.enrollCell(CELL, "so101"), CELL);
    await agent.connect();
    // A cell says it is alive every second (the device's own clock, not a wait in the test).
    heartbeats = setInterval(() => agent.send({ heartbeat: { sentAtMs: Date.now(), state: running ? "busy" : "idle", episodeId: running, dutyCyclePct: 0, uploadBacklog: 0, instrumentsDown: [] } }), 1000);
    feed = agent.client.liveFeed(agent.metadata(), (_error: unknown, _end?: LiveFeedEnd) => undefined);
  });

  afterEach(async () => {
    for (const close of closeAfter.splice(0)) await close();
  });

  after(async () => {
    clearInterval(heartbeats);
    feed?.end();
    agent?.close();
    await coordinator?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("closes account A's MJPEG viewer and signalling WebSocket when A's run ends; neither gets a frame of account E's run that follows", async () => {
    const aViewer = (await key(DEFAULT_ACCOUNT_ID, ["streams:read"])).secret;
    const eKey = (await key(OTHER_ACCOUNT, ["runs:read", "runs:write", "streams:read"])).secret;
    const a = await startRunOnCell(TEST_ADMIN_KEY);

    const descriptor = await json(await api(`/v1/streams/${CELL}`, aViewer), 200);
    assert.equal(descriptor.run_id, a.runId);
    const top = descriptor.cameras.find((c: Json) => c.name === "top");
    const mjpeg = new MjpegReader(await fetch(top.mjpeg_url));
    closeAfter.push(() => mjpeg.cancel());
    const signalling = await openSignalling(descriptor.webrtc.url);
    closeAfter.push(() => signalling.ws.terminate());
    assert.deepEqual((await signalling.offer).cameras.map((c: Json) => c.name).sort(), ["top", "wrist"]);

    // The cell is told to send the top camera once someone watches it; A's viewer gets A's frame.
    await agent.next((m) => (m.watch?.cameras.includes("top") ? m.watch : undefined));
    sendFrame(`frame of ${a.runId}`);
    await mjpeg.frame(`frame of ${a.runId}`);

    // E's run waits for the cell; A's run ends with its episode, and the cell moves on to E's.
    const eRun = await json(await api("/v1/runs", eKey, { method: "POST", json: { ...README_RUN_BODY, episodes: 1 } }), 201);
    await finished(a.assign);
    assert.equal((await waitForRunEnd(coordinator.baseUrl, TEST_ADMIN_KEY, a.runId)).status, "completed");
    const eAssign = await agent.next((m) => m.assignEpisode);
    await started(eAssign);

    // E watches its own run and gets E's frames ...
    const eDescriptor = await json(await api(`/v1/streams/${CELL}`, eKey), 200);
    assert.equal(eDescriptor.run_id, eRun.id);
    const eMjpeg = new MjpegReader(await fetch(eDescriptor.cameras.find((c: Json) => c.name === "top").mjpeg_url));
    closeAfter.push(() => eMjpeg.cancel());
    await agent.next((m) => (m.watch?.cameras.includes("top") ? m.watch : undefined));
    sendFrame(`frame of ${eRun.id}`);
    await eMjpeg.frame(`frame of ${eRun.id}`);

    // ... while A's views were closed when A's run ended, before any frame of E's.
    await mjpeg.ended;
    assert.deepEqual(mjpeg.parts, [`frame of ${a.runId}`]);
    const closed = await signalling.closed;
    assert.equal(closed.code, ACCESS_LAPSED_CLOSE_CODE);
    assert.match(closed.reason, new RegExp(`run ${a.runId} ended`));
    assert.ok(signalling.messages.some((m) => m.type === "error" && /access to this live view ended/.test(m.message)), JSON.stringify(signalling.messages));
    // A's token no longer opens anything on the cell, now E's.
    assert.equal((await json(await fetch(top.mjpeg_url), 404)).error.code, "not_found");
    assert.equal((await refusedUpgrade(descriptor.webrtc.url)).status, 404);

    await finished(eAssign);
    await eMjpeg.ended;
    assert.deepEqual(eMjpeg.parts, [`frame of ${eRun.id}`]);
  });

  it("closes A's views when the cell moves on to E's run while A's run goes on, before E's first frame", async () => {
    const aViewer = (await key(DEFAULT_ACCOUNT_ID, ["streams:read"])).secret;
    const eKey = (await key(OTHER_ACCOUNT, ["runs:read", "runs:write", "streams:read"])).secret;
    const aRun = await json(await api("/v1/runs", TEST_ADMIN_KEY, { method: "POST", json: { ...README_RUN_BODY, episodes: 2 } }), 201);
    const aFirst = await agent.next((m) => m.assignEpisode);
    await started(aFirst);
    const descriptor = await json(await api(`/v1/streams/${CELL}`, aViewer), 200);
    const mjpeg = new MjpegReader(await fetch(descriptor.cameras.find((c: Json) => c.name === "top").mjpeg_url));
    closeAfter.push(() => mjpeg.cancel());
    const signalling = await openSignalling(descriptor.webrtc.url);
    closeAfter.push(() => signalling.ws.terminate());
    await signalling.offer;
    sendFrame(`frame of ${aRun.id}`);
    await mjpeg.frame(`frame of ${aRun.id}`);

    // E's burst run goes ahead of A's second episode: the cell moves on while A's run is still running.
    const eRun = await json(await api("/v1/runs", eKey, { method: "POST", json: { ...README_RUN_BODY, episodes: 1, priority: "burst" } }), 201);
    await finished(aFirst);
    const eAssign = await agent.next((m) => m.assignEpisode);
    assert.equal((await json(await api(`/v1/runs/${aRun.id}`), 200)).status, "running");
    await started(eAssign);
    sendFrame(`frame of ${eRun.id}`);
    await mjpeg.ended;
    assert.deepEqual(mjpeg.parts, [`frame of ${aRun.id}`]);
    const closed = await signalling.closed;
    assert.equal(closed.code, ACCESS_LAPSED_CLOSE_CODE);
    assert.equal(closed.reason, "the cell moved on to another run");

    await finished(eAssign);
    const aSecond = await agent.next((m) => m.assignEpisode);
    await started(aSecond);
    await finished(aSecond);
    assert.equal((await waitForRunEnd(coordinator.baseUrl, TEST_ADMIN_KEY, aRun.id)).status, "completed");
  });

  it("gives a key without streams:read nothing in a run's events that opens a live view, and closes a view when its key is revoked", async () => {
    const readOnly = await key(DEFAULT_ACCOUNT_ID, ["runs:read"]);
    const watcher = await key(DEFAULT_ACCOUNT_ID, ["runs:read", "streams:read"]);
    const published: RunEvent[] = [];
    const run = await json(await api("/v1/runs", TEST_ADMIN_KEY, { method: "POST", json: { ...README_RUN_BODY, episodes: 1 } }), 201);
    const stopListening = coordinator.runEvents.subscribe(run.id, (event) => published.push(event));
    closeAfter.push(stopListening);
    const assign = await agent.next((m) => m.assignEpisode);
    await started(assign);

    const running = (e: { event: string; data: unknown }) => e.event === "status" && (e.data as Json).status === "running";
    const readOnlyEvents = await readSse(await api(`/v1/runs/${run.id}/events`, readOnly.secret), running);
    const watcherEvents = await readSse(await api(`/v1/runs/${run.id}/events`, watcher.secret), running);
    const readOnlyStatus = readOnlyEvents.at(-1)!.data as Json;
    assert.equal(readOnlyStatus.cell, CELL);
    assert.equal(readOnlyStatus.webrtc, null, "a runs:read-only key's status event carries no stream URL");
    const watcherUrl = (watcherEvents.at(-1)!.data as Json).webrtc as string;
    assert.match(watcherUrl, new RegExp(`^${coordinator.streamsUrl}/cells/${CELL}\\?token=`));

    // The descriptor refuses the key, and so does a token made out to it (as if it had been minted).
    assert.equal((await json(await api(`/v1/streams/${CELL}`, readOnly.secret), 403)).error.code, "insufficient_scope");
    const forged = await signStreamToken(coordinator.db, { cellId: CELL, accountId: DEFAULT_ACCOUNT_ID, keyId: readOnly.row.id, runId: run.id, expiresAt: new Date(Date.now() + 60_000) }, new Date());
    const forgedMjpeg = await json(await fetch(`${coordinator.baseUrl}/streams/cells/${CELL}/cameras/top.mjpeg?token=${forged}`), 403);
    assert.equal(forgedMjpeg.error.code, "insufficient_scope");
    assert.match(forgedMjpeg.error.message, /does not hold streams:read/);
    const forgedWs = await refusedUpgrade(`${coordinator.streamsUrl}/cells/${CELL}?token=${forged}`);
    assert.equal(forgedWs.status, 403);
    assert.equal(forgedWs.body.error.code, "insufficient_scope");
    // The URL the lifecycle publishes is made out to no key: it opens nothing.
    const internal = published.map((e) => e.type === "status" && e.data.webrtc).find(Boolean) as string;
    assert.ok(internal, JSON.stringify(published));
    const internalToken = new URL(internal).searchParams.get("token")!;
    const keyless = await json(await fetch(`${coordinator.baseUrl}/streams/cells/${CELL}/cameras/top.mjpeg?token=${internalToken}`), 401);
    assert.match(keyless.error.message, /names no API key/);

    // The URL from the streams:read key's events opens the view; revoking the key closes it.
    const signalling = await openSignalling(watcherUrl);
    closeAfter.push(() => signalling.ws.terminate());
    await signalling.offer;
    const mjpeg = new MjpegReader(await fetch(`${coordinator.baseUrl}/streams/cells/${CELL}/cameras/top.mjpeg?token=${new URL(watcherUrl).searchParams.get("token")}`));
    closeAfter.push(() => mjpeg.cancel());
    await json(await api(`/v1/keys/${watcher.row.id}`, TEST_ADMIN_KEY, { method: "DELETE" }), 200);
    await mjpeg.ended;
    const closed = await signalling.closed;
    assert.equal(closed.code, ACCESS_LAPSED_CLOSE_CODE);
    assert.match(closed.reason, /revoked/);

    await finished(assign);
    assert.equal((await waitForRunEnd(coordinator.baseUrl, TEST_ADMIN_KEY, run.id)).status, "completed");
  });

  it("caps MJPEG viewers, signalling WebSockets and event streams per key and per account: the next is refused 429 before it starts", async () => {
    // Operators watch any cell, so the cell needs no run for these.
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) keys.push((await key(CATALOG_ACCOUNT_ID, ["runs:read", "streams:read"])).secret);
    const mjpegUrl = `${coordinator.baseUrl}/streams/cells/${CELL}/cameras/top.mjpeg`;
    const viewers: MjpegReader[] = [];
    closeAfter.push(() => Promise.all(viewers.map((v) => v.cancel())));
    const openMjpeg = (k: string) => fetch(mjpegUrl, { headers: { authorization: `Bearer ${k}` } });
    const refused429 = async (res: Response, message: RegExp) => {
      const body = await json(res, 429);
      assert.equal(body.error.code, "rate_limited");
      assert.match(body.error.message, message);
      assert.equal(res.headers.get("retry-after"), "5");
    };

    for (let i = 0; i < CAPS.mjpeg_viewers.perKey; i++) viewers.push(new MjpegReader(await openMjpeg(keys[0]!)));
    await refused429(await openMjpeg(keys[0]!), /this key has 3 MJPEG viewers open, the most allowed per key/);
    for (let i = 0; i < 2; i++) viewers.push(new MjpegReader(await openMjpeg(keys[1]!)));
    await refused429(await openMjpeg(keys[2]!), /this account has 5 MJPEG viewers open, the most allowed per account/);
    // Closing one frees its slot once the server sees the connection go.
    await viewers.shift()!.cancel();
    viewers.push(new MjpegReader(await eventually("a freed MJPEG slot", async () => {
      const res = await openMjpeg(keys[2]!);
      if (res.status === 200) return res;
      await res.body?.cancel();
      return undefined;
    })));

    const descriptor = async (k: string) => (await json(await api(`/v1/streams/${CELL}`, k), 200)).webrtc.url as string;
    const sockets: Signalling[] = [];
    closeAfter.push(() => sockets.forEach((s) => s.ws.terminate()));
    for (let i = 0; i < CAPS.signalling_websockets.perKey; i++) sockets.push(await openSignalling(await descriptor(keys[0]!)));
    const overKey = await refusedUpgrade(await descriptor(keys[0]!));
    assert.equal(overKey.status, 429);
    assert.equal(overKey.headers["retry-after"], "5");
    assert.equal(overKey.body.error.code, "rate_limited");
    assert.match(overKey.body.error.message, /this key has 2 WebRTC signalling WebSockets open/);
    sockets.push(await openSignalling(await descriptor(keys[1]!)));
    const overAccount = await refusedUpgrade(await descriptor(keys[2]!));
    assert.equal(overAccount.status, 429);
    assert.match(overAccount.body.error.message, /this account has 3 WebRTC signalling WebSockets open/);

    // Event streams of a run the cell is running (the audit's 300 on one key were all admitted).
    const run = await json(await api("/v1/runs", TEST_ADMIN_KEY, { method: "POST", json: { ...README_RUN_BODY, episodes: 1 } }), 201);
    const assign = await agent.next((m) => m.assignEpisode);
    await started(assign);
    const streamKeys: string[] = [];
    for (let i = 0; i < 2; i++) streamKeys.push((await key(DEFAULT_ACCOUNT_ID, ["runs:read"])).secret);
    const aborts: AbortController[] = [];
    closeAfter.push(() => aborts.forEach((a) => a.abort()));
    const openEvents = async (k: string) => {
      const abort = new AbortController();
      const res = await api(`/v1/runs/${run.id}/events`, k, { signal: abort.signal });
      if (res.status === 200) aborts.push(abort);
      return res;
    };
    const concurrent = await Promise.all(Array.from({ length: 12 }, () => openEvents(streamKeys[0]!)));
    assert.deepEqual(concurrent.map((r) => r.status).sort(), [...Array(3).fill(200), ...Array(9).fill(429)]);
    const overKeyEvents = concurrent.find((r) => r.status === 429)!;
    await refused429(overKeyEvents, /this key has 3 event streams open, the most allowed per key/);
    assert.equal((await openEvents(streamKeys[1]!)).status, 200);
    await refused429(await openEvents(streamKeys[1]!), /this account has 4 event streams open, the most allowed per account/);

    for (const abort of aborts.splice(0)) abort.abort();
    await finished(assign);
    assert.equal((await waitForRunEnd(coordinator.baseUrl, TEST_ADMIN_KEY, run.id)).status, "completed");
  });
});
