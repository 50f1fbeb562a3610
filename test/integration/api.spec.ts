/**
 * The /v1 API over real HTTP: express on port 0, a real SQLite file in a temp dir, a stub fleet
 * reporting connected so101 cells (the device the test replaces), and a scheduler that counts kicks.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { createApiApp } from "../../coordinator/api/app.js";
import { ensureAdminKey } from "../../coordinator/auth/bootstrap.js";
import { seedTasks } from "../../coordinator/tasks/task-catalog.js";
import type { ConnectedCell, FleetView } from "../../coordinator/cells/fleet-view.js";
import { createMetricsRegistry } from "../../coordinator/metrics.js";
import { RunEvents } from "../../coordinator/runs/run-events.js";
import type { Db } from "../../coordinator/store/database.js";
import { setRunStatus } from "../../coordinator/store/runs-repo.js";
import { README_RUN_BODY } from "../fixtures.js";
import { DiskStore } from "../../coordinator/storage/disk-store.js";
import { integrationEngine, openTestDatabase } from "../support/test-database.js";

const README_BODY = README_RUN_BODY;

function cell(cellId: string, firmware: string, dutyCyclePct: number): ConnectedCell {
  return {
    cellId, model: "so101", firmware, environment: "tabletop@1",
    // What a tabletop@1 cell's agent reports: pick-cube's predicates read mocap and gripper_state.
    instruments: [{ kind: "joint_states", name: "" }, { kind: "camera", name: "top" }, { kind: "camera", name: "wrist" }, { kind: "gripper_state", name: "" }, { kind: "ft_wrist", name: "" }, { kind: "mocap", name: "" }, { kind: "estop", name: "" }],
    policyImages: ["assay/ref-policy:expert", "assay/ref-policy:random"],
    state: "idle", dutyCyclePct, connectedAt: "2026-11-01T00:00:00.000Z",
  };
}

describe("/v1 API (integration)", () => {
  let dir: string;
  let db: Db;
  let server: Server;
  let base: string;
  let admin: string;
  let kicks = 0;
  const runEvents = new RunEvents();
  const fleet: FleetView = { connectedCells: async () => [cell("so101-b", "3.11", 40), cell("so101-c", "3.11", 60)], assignedEpisodeOf: () => undefined };

  const call = (path: string, init: RequestInit & { key?: string | null; json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    const key = init.key === undefined ? admin : init.key;
    if (key) headers.set("authorization", `Bearer ${key}`);
    if (init.json !== undefined) headers.set("content-type", "application/json");
    return fetch(base + path, { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
  };
  const postRun = (body: unknown, headers: Record<string, string> = {}, key?: string) => call("/v1/runs", { method: "POST", json: body, headers, key });
  const expectError = async (res: Response, status: number, code: string) => {
    const body = (await res.json()) as { error: Record<string, string> };
    assert.equal(res.status, status, JSON.stringify(body));
    assert.equal(body.error.code, code);
    assert.equal(body.error.doc_url, `${base}/docs/errors#${code}`);
    assert.equal(typeof body.error.message, "string");
    return body.error;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-api-"));
    db = await openTestDatabase(integrationEngine(), join(dir, "assay.sqlite"));
    await seedTasks(db);
    const bootstrap = await ensureAdminKey(db);
    assert.ok(bootstrap.created && bootstrap.secret);
    admin = bootstrap.secret;
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const app = createApiApp({
      db, fleet, runEvents, scheduler: { kick: () => { kicks++; } }, pins: loadFirmwarePins(),
      urls: { baseUrl: base, artifactUrl: `${base}/artifacts`, streamsUrl: "wss://streams.test", docsUrl: `${base}/docs` },
      objects: new DiskStore(join(dir, "artifacts")), metrics: createMetricsRegistry({ defaultMetrics: false }), log: () => {},
    });
    server.on("request", app);
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a missing or unknown option when the app is built", () => {
    const options = {
      db, fleet, runEvents, scheduler: { kick() {} }, pins: loadFirmwarePins(),
      urls: { baseUrl: base, artifactUrl: `${base}/artifacts`, streamsUrl: "wss://streams.test", docsUrl: `${base}/docs` },
      objects: new DiskStore(dir), metrics: createMetricsRegistry({ defaultMetrics: false }),
    };
    assert.throws(() => createApiApp({ ...options, colour: "blue" } as never), /unknown API option "colour"/);
    assert.throws(() => createApiApp({ ...options, urls: { ...options.urls, docsUrl: "docs" } }), /urls\.docsUrl must be an absolute URL/);
    assert.throws(() => createApiApp({ ...options, objects: undefined } as never), /"objects" is required/);
  });

  it("refuses NUL characters in the URL and in body strings or keys, naming them", async () => {
    const inPath = await call("/v1/runs/run_%00x");
    assert.match((await expectError(inPath, 404, "not_found")).message, /NUL character/);
    const inQuery = await call("/v1/runs?status=queued%00");
    assert.match((await expectError(inQuery, 422, "contract_validation_failed")).message, /NUL character/);
    const inBody = await call("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, task: "pick-cube@v1\u0000" } });
    assert.match((await expectError(inBody, 422, "contract_validation_failed")).message, /NUL character/);
    const inKey = await call("/v1/keys", { method: "POST", json: { scope: ["runs:read"], "a\u0000": 1 } });
    assert.match((await expectError(inKey, 422, "contract_validation_failed")).message, /NUL character/);
  });

  describe("authentication", () => {
    it("rejects a request without a key with 401 invalid_api_key", async () => {
      await expectError(await call("/v1/robots", { key: null }), 401, "invalid_api_key");
    });

    it("rejects malformed and unknown keys", async () => {
      await expectError(await call("/v1/robots", { key: "sk_test_123" }), 401, "invalid_api_key");
      await expectError(await call("/v1/robots", { key: "asy_live_" + "x".repeat(40) }), 401, "invalid_api_key");
    });

    it("creates keys, lists them without secrets, and enforces scope with 403", async () => {
      const created = await call("/v1/keys", { method: "POST", json: { scope: ["runs:read"] } });
      assert.equal(created.status, 201);
      const key = (await created.json()) as { object: string; id: string; scope: string[]; secret: string; created: string };
      assert.equal(key.object, "key");
      assert.deepEqual(key.scope, ["runs:read"]);
      assert.match(key.secret, /^asy_live_[A-Za-z0-9]{32,}$/);

      const list = (await (await call("/v1/keys")).json()) as { object: string; url: string; data: Array<Record<string, unknown>> };
      assert.equal(list.object, "list");
      assert.equal(list.url, "/v1/keys");
      assert.ok(list.data.some((k) => k.id === key.id));
      for (const k of list.data) assert.equal(k.secret, undefined);
      assert.ok(!JSON.stringify(list).includes(key.secret));

      assert.equal((await call("/v1/robots", { key: key.secret })).status, 200);
      const denied = await expectError(await postRun(README_BODY, {}, key.secret), 403, "insufficient_scope");
      assert.match(denied.message, /runs:write/);
      await expectError(await call("/v1/keys", { key: key.secret }), 403, "insufficient_scope");
    });

    it("lets a key grant only the scopes it holds", async () => {
      const admin = (await (await call("/v1/keys", { method: "POST", json: { scope: ["keys:admin", "runs:read"] } })).json()) as { secret: string };
      const error = await expectError(await call("/v1/keys", { method: "POST", json: { scope: ["runs:read", "runs:write", "data:purge"] }, key: admin.secret }), 403, "insufficient_scope");
      assert.match(error.message, /does not hold runs:write, data:purge$/);
      const narrower = await call("/v1/keys", { method: "POST", json: { scope: ["runs:read"] }, key: admin.secret });
      assert.equal(narrower.status, 201);
    });

    it("rejects a key body with an unknown scope, naming it", async () => {
      const error = await expectError(await call("/v1/keys", { method: "POST", json: { scope: ["runs:read", "runs:delete"] } }), 422, "contract_validation_failed");
      assert.match(error.message, /"runs:delete"/);
    });

    it("answers an unknown /v1 path with 404 not_found", async () => {
      await expectError(await call("/v1/nope"), 404, "not_found");
    });
  });

  describe("catalogue", () => {
    it("lists robots with installed firmwares, cell counts and live duty cycle", async () => {
      const res = await call("/v1/robots");
      assert.equal(res.status, 200);
      const list = (await res.json()) as { object: string; url: string; data: Array<Record<string, unknown>> };
      assert.equal(list.object, "list");
      assert.equal(list.url, "/v1/robots");
      const so101 = list.data.find((r) => r.id === "so101");
      assert.deepEqual(so101, {
        id: "so101", object: "robot", class: "arm-pod", dof: 6, hands: "so101-gripper", firmwares: ["3.10", "3.11"], cells: 4, duty_cycle_pct: 50, tier: "soak",
      });
      assert.equal(list.data.find((r) => r.id === "fr3")?.duty_cycle_pct, 0);
    });

    it("filters robots by class and tier, and rejects unknown values", async () => {
      const byClass = (await (await call("/v1/robots?class=arm-pod")).json()) as { data: Array<{ id: string }> };
      assert.deepEqual(byClass.data.map((r) => r.id), ["so101"]);
      const verify = (await (await call("/v1/robots?tier=verify")).json()) as { data: Array<{ id: string }> };
      assert.deepEqual(verify.data.map((r) => r.id).sort(), ["fr3", "g1"]);
      const error = await expectError(await call("/v1/robots?class=tank"), 422, "contract_validation_failed");
      assert.match(error.message, /"tank"/);
    });

    it("lists environments with status and resolves a bare name to the newest version", async () => {
      const list = (await (await call("/v1/environments")).json()) as { data: Array<Record<string, unknown>> };
      const tabletop1 = list.data.find((e) => e.id === "tabletop@1");
      assert.equal(tabletop1?.status, "online");
      assert.equal(tabletop1?.cells, 6);
      assert.equal(list.data.find((e) => e.id === "tabletop@2")?.status, "offline");
      const latest = (await (await call("/v1/environments/tabletop")).json()) as { id: string };
      assert.equal(latest.id, "tabletop@2");
      await expectError(await call("/v1/environments/moon@1"), 404, "not_found");
    });
  });

  describe("POST /v1/runs", () => {
    it("accepts the README body: 201, queued, @latest resolved, episodes created, scheduler kicked", async () => {
      const kicksBefore = kicks;
      const res = await postRun(README_BODY);
      const run = (await res.json()) as Record<string, any>;
      assert.equal(res.status, 201, JSON.stringify(run));
      assert.match(run.id, /^run_/);
      assert.equal(run.object, "run");
      assert.equal(run.kind, "run");
      assert.equal(run.status, "queued");
      assert.equal(run.robot, "so101@latest");
      assert.equal(run.episodes, 20);
      assert.equal(run.priority, "standard");
      assert.deepEqual(run.policy, README_BODY.policy);
      assert.deepEqual(run.data, { retention: "30d", train_on_failures: false });
      assert.deepEqual(run.resolved_pins, { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" });
      assert.equal(run.completed, undefined);
      assert.equal(run.result, undefined);
      assert.equal(kicks, kicksBefore + 1);
      const episodes = await db.prepare("SELECT idx, status, attempt, seed FROM episodes WHERE run_id = ? ORDER BY idx").all(run.id) as Array<{ idx: number; status: string; attempt: number; seed: number }>;
      assert.equal(episodes.length, 20);
      assert.ok(episodes.every((e, i) => e.idx === i && e.status === "pending" && e.attempt === 0 && e.seed >= 0 && e.seed < 2 ** 31));
    });

    it("rejects an action_space whose dim is not the robot's dof", async () => {
      const body = { ...README_BODY, policy: { ...README_BODY.policy, action_space: { type: "joint_position", dim: 7 } } };
      const error = await expectError(await postRun(body), 422, "contract_validation_failed");
      assert.match(error.message, /policy\.action_space\.dim.*6.*got 7/);
    });

    it("rejects a camera the environment does not have", async () => {
      const body = { ...README_BODY, policy: { ...README_BODY.policy, observation_contract: { cameras: ["top", "side"], state: ["joint_positions"] } } };
      const error = await expectError(await postRun(body), 422, "contract_validation_failed");
      assert.match(error.message, /"side"/);
    });

    it("rejects a firmware pin installed on no cell", async () => {
      const error = await expectError(await postRun({ ...README_BODY, robot: "fr3@5.7.2" }), 422, "firmware_pin_unavailable");
      assert.match(error.message, /fr3@5\.9\.0/);
    });

    it("rejects bad episodes with the documented message", async () => {
      const error = await expectError(await postRun({ ...README_BODY, episodes: "auto(ci=2)" }), 422, "episodes_invalid");
      assert.equal(error.message, 'episodes must be a positive integer or auto(ci=<0..1>, moe=<0..1>); got "auto(ci=2)"');
      await expectError(await postRun({ ...README_BODY, episodes: 0 }), 422, "episodes_invalid");
    });

    it("rejects an unknown top-level field and a policy image the cells cannot run", async () => {
      const unknown = await expectError(await postRun({ ...README_BODY, episode: 3 }), 422, "contract_validation_failed");
      assert.match(unknown.message, /unknown field episode/);
      const image = await expectError(await postRun({ ...README_BODY, policy: { ...README_BODY.policy, image: "acme/other:1" } }), 422, "contract_validation_failed");
      assert.match(image.message, /assay\/ref-policy:expert/);
    });

    it("answers a malformed JSON body with the envelope, not a stack trace", async () => {
      const res = await call("/v1/runs", { method: "POST", headers: { "content-type": "application/json" }, body: '{"kind": "run",' });
      const error = await expectError(res, 422, "contract_validation_failed");
      assert.doesNotMatch(error.message, /at .*\.js|node_modules/);
    });

    it("replays an Idempotency-Key with the original run and refuses a different body", async () => {
      const first = await postRun(README_BODY, { "idempotency-key": "retry-1" });
      assert.equal(first.status, 201);
      const original = (await first.json()) as { id: string };
      const again = await postRun(README_BODY, { "idempotency-key": "retry-1" });
      assert.equal(again.status, 200);
      assert.equal(((await again.json()) as { id: string }).id, original.id);
      const count = (await db.prepare("SELECT COUNT(*) AS n FROM runs WHERE idempotency_key = 'retry-1'").get() as { n: number }).n;
      assert.equal(count, 1);
      const error = await expectError(await postRun({ ...README_BODY, episodes: 21 }, { "idempotency-key": "retry-1" }), 422, "contract_validation_failed");
      assert.equal(error.run_id, original.id);
    });
  });

  describe("GET /v1/runs", () => {
    it("lists newest first with limit, has_more and starting_after", async () => {
      const all = (await (await call("/v1/runs")).json()) as { object: string; url: string; has_more: boolean; data: Array<{ id: string; created: string }> };
      assert.equal(all.object, "list");
      assert.equal(all.url, "/v1/runs");
      assert.equal(all.has_more, false);
      assert.ok(all.data.length >= 2);
      for (let i = 1; i < all.data.length; i++) assert.ok(all.data[i - 1].created >= all.data[i].created);
      const page1 = (await (await call("/v1/runs?limit=1")).json()) as { has_more: boolean; data: Array<{ id: string }> };
      assert.equal(page1.data.length, 1);
      assert.equal(page1.has_more, true);
      assert.equal(page1.data[0].id, all.data[0].id);
      const page2 = (await (await call(`/v1/runs?limit=1&starting_after=${page1.data[0].id}`)).json()) as { data: Array<{ id: string }> };
      assert.equal(page2.data[0].id, all.data[1].id);
      await expectError(await call("/v1/runs?limit=101"), 422, "contract_validation_failed");
      await expectError(await call("/v1/runs?status=done"), 422, "contract_validation_failed");
      const queued = (await (await call("/v1/runs?status=queued&kind=run")).json()) as { data: unknown[] };
      assert.equal(queued.data.length, all.data.length);
    });

    it("returns one run, and 404 with run_id for an unknown one", async () => {
      const [first] = ((await (await call("/v1/runs?limit=1")).json()) as { data: Array<{ id: string }> }).data;
      const run = (await (await call(`/v1/runs/${first.id}`)).json()) as { id: string };
      assert.equal(run.id, first.id);
      const error = await expectError(await call("/v1/runs/run_missing"), 404, "not_found");
      assert.equal(error.run_id, "run_missing");
    });
  });

  describe("episodes, artifacts and events", () => {
    let runId: string;
    let episodeId: string;

    before(async () => {
      const run = (await (await postRun({ ...README_BODY, episodes: 3 })).json()) as { id: string };
      runId = run.id;
      const episode = await db.prepare("SELECT id FROM episodes WHERE run_id = ? AND idx = 0").get(runId) as { id: string };
      episodeId = episode.id;
      await db.prepare(
        `UPDATE episodes SET status = 'done', attempt = 1, cell_id = 'so101-b', outcome = 'failure', failure_cluster = 'grasp_slip',
           duration_s = 12.5, replay_spec = ?, interruptions = '[]', finished_at = '2026-11-01T00:00:10.000Z' WHERE id = ?`,
      ).run(JSON.stringify({ environment: "tabletop@1", layout_seed: 7, lighting: "nominal", distractors: "none" }), episodeId);
      await db.prepare(`INSERT INTO artifacts (episode_id, run_id, kind, file_name, bytes, sha256, status, stored_at) VALUES (?, ?, 'mcap', 'episode.mcap', 5, 'abc', 'stored', '2026-11-01T00:00:11.000Z')`).run(episodeId, runId);
      await db.prepare(`INSERT INTO artifacts (episode_id, run_id, kind, file_name, bytes, sha256, status, stored_at) VALUES (?, ?, 'video', 'episode.mp4', 5, 'def', 'purged', NULL)`).run(episodeId, runId);
      await db.prepare(`INSERT INTO artifacts (episode_id, run_id, kind, file_name, bytes, sha256, status, stored_at) VALUES (?, ?, 'video:wrist', 'episode.wrist.mp4', 7, 'fed', 'stored', '2026-11-01T00:00:11.000Z')`).run(episodeId, runId);
      mkdirSync(join(dir, "artifacts", runId, episodeId), { recursive: true });
      writeFileSync(join(dir, "artifacts", runId, episodeId, "episode.mcap"), "MCAP!");
    });

    it("lists only finished episodes, with artifact URLs and filters", async () => {
      const list = (await (await call(`/v1/runs/${runId}/episodes`)).json()) as { url: string; data: Array<Record<string, unknown>> };
      assert.equal(list.url, `/v1/runs/${runId}/episodes`);
      assert.equal(list.data.length, 1);
      assert.deepEqual(list.data[0], {
        id: episodeId, object: "episode", index: 0, outcome: "failure", duration_s: 12.5,
        video_url: `${base}/artifacts/runs/${runId}/episodes/${episodeId}/episode.mp4`,
        videos: { top: `${base}/artifacts/runs/${runId}/episodes/${episodeId}/episode.mp4`, wrist: `${base}/artifacts/runs/${runId}/episodes/${episodeId}/episode.wrist.mp4` },
        mcap_url: `${base}/artifacts/runs/${runId}/episodes/${episodeId}/episode.mcap`,
        replay_spec: { environment: "tabletop@1", layout_seed: 7, lighting: "nominal", distractors: "none" },
        thumbnail_url: `${base}/v1/runs/${runId}/episodes/${episodeId}/thumbnail`,
        series_url: `${base}/v1/runs/${runId}/episodes/${episodeId}/series`,
        failure_cluster: "grasp_slip", last_stage: null, cell: "so101-b", attempts: 1, interruptions: [],
      });
      // The stored "recording" is not an MCAP: its still and series are refused in the envelope, saying why, never a 500.
      for (const what of ["thumbnail", "series"]) {
        const refused = await call(`/v1/runs/${runId}/episodes/${episodeId}/${what}`);
        assert.equal(refused.status, 422, what);
        const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
        assert.equal(error.code, "contract_validation_failed");
        assert.match(error.message, new RegExp(`^the recording of episode ${episodeId} could not be read as an MCAP: `));
      }
      const successes = (await (await call(`/v1/runs/${runId}/episodes?outcome=success`)).json()) as { data: unknown[] };
      assert.equal(successes.data.length, 0);
      const cluster = (await (await call(`/v1/runs/${runId}/episodes?cluster=grasp_slip`)).json()) as { data: unknown[] };
      assert.equal(cluster.data.length, 1);
      const mcaps = (await (await call(`/v1/runs/${runId}/episodes?artifact=mcap`)).json()) as { data: Array<Record<string, unknown>> };
      assert.deepEqual(mcaps.data, [{
        object: "artifact", episode_id: episodeId, index: 0, kind: "mcap",
        url: `${base}/artifacts/runs/${runId}/episodes/${episodeId}/episode.mcap`, bytes: 5, sha256: "abc", status: "stored",
      }]);
      const wrist = (await (await call(`/v1/runs/${runId}/episodes?artifact=video:wrist`)).json()) as { data: Array<Record<string, unknown>> };
      assert.deepEqual(wrist.data, [{
        object: "artifact", episode_id: episodeId, index: 0, kind: "video:wrist",
        url: `${base}/artifacts/runs/${runId}/episodes/${episodeId}/episode.wrist.mp4`, bytes: 7, sha256: "fed", status: "stored",
      }]);
      const badKind = await expectError(await call(`/v1/runs/${runId}/episodes?artifact=audio`), 422, "contract_validation_failed");
      assert.match(badKind.message as string, /artifact must be one of mcap, video, ground_truth or video:<camera>/);
      await expectError(await call(`/v1/runs/run_missing/episodes`), 404, "not_found");
    });

    it("serves a stored artifact to a key with runs:read, 410 once purged, 401 without a key", async () => {
      const res = await call(`/artifacts/runs/${runId}/episodes/${episodeId}/episode.mcap`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), "application/octet-stream");
      assert.equal(await res.text(), "MCAP!");
      await expectError(await call(`/artifacts/runs/${runId}/episodes/${episodeId}/episode.mp4`), 410, "retention_expired");
      await expectError(await call(`/artifacts/runs/${runId}/episodes/${episodeId}/other.mcap`), 404, "not_found");
      await expectError(await call(`/artifacts/runs/${runId}/episodes/${episodeId}/episode.mcap`, { key: null }), 401, "invalid_api_key");
    });

    it("streams the current status and history, then live events, and closes after a terminal status", async () => {
      const res = await call(`/v1/runs/${runId}/events`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      const readUntil = async (needle: string) => {
        while (!text.includes(needle)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`stream ended before ${needle}; got ${text}`);
          text += decoder.decode(value, { stream: true });
        }
      };
      await readUntil('"outcome":"failure"');
      assert.ok(text.startsWith('event: status\ndata: {"status":"queued","cell":null,"webrtc":null}\n\n'), text);
      assert.ok(text.includes('event: episode\ndata: {"episode":1,"of":3,"outcome":"failure","duration_s":12.5}\n\n'));

      runEvents.publish({ runId, type: "status", data: { status: "scheduling", cell: "so101-b", webrtc: "wss://streams.test/cells/so101-b" } });
      await readUntil('"status":"scheduling"');
      assert.ok(await setRunStatus(db, runId, "stopped", { code: "estop_triggered", message: "e-stop on so101-b" }));
      runEvents.publish({ runId, type: "status", data: { status: "stopped", cell: null, webrtc: null } });
      await readUntil('"status":"stopped"');
      const { done } = await reader.read();
      assert.equal(done, true);

      const stopped = (await (await call(`/v1/runs/${runId}`)).json()) as { status: string; status_detail: unknown };
      assert.equal(stopped.status, "stopped");
      assert.deepEqual(stopped.status_detail, { code: "estop_triggered", message: "e-stop on so101-b" });
    });

    it("sends heartbeat comments on an open stream", async () => {
      const quick = createServer(createApiApp({
        db, fleet, runEvents, scheduler: { kick() {} }, pins: loadFirmwarePins(),
        urls: { baseUrl: base, artifactUrl: `${base}/artifacts`, streamsUrl: "wss://streams.test", docsUrl: `${base}/docs` },
        objects: new DiskStore(dir), metrics: createMetricsRegistry({ defaultMetrics: false }), sseHeartbeatMs: 10,
      }));
      await new Promise<void>((resolve) => quick.listen(0, "127.0.0.1", resolve));
      try {
        const open = (await (await postRun({ ...README_BODY, episodes: 1 })).json()) as { id: string };
        const controller = new AbortController();
        const res = await fetch(`http://127.0.0.1:${(quick.address() as AddressInfo).port}/v1/runs/${open.id}/events`, { headers: { authorization: `Bearer ${admin}` }, signal: controller.signal });
        const reader = res.body!.getReader();
        let text = "";
        while (!text.includes(": heartbeat\n\n")) text += new TextDecoder().decode((await reader.read()).value);
        controller.abort();
      } finally {
        quick.closeAllConnections();
        await new Promise((resolve) => quick.close(resolve));
      }
    });

    it("accepts a streams:read key for events and 404s an unknown run", async () => {
      const created = (await (await call("/v1/keys", { method: "POST", json: { scope: ["streams:read"] } })).json()) as { secret: string };
      const res = await call(`/v1/runs/${runId}/events`, { key: created.secret });
      assert.equal(res.status, 200);
      assert.match(await res.text(), /"status":"stopped"/); // terminal run: history, then the stream ends
      await expectError(await call("/v1/runs/run_missing/events"), 404, "not_found");
    });
  });

  describe("unauthenticated pages", () => {
    it("serves the error docs with an anchor per code", async () => {
      const res = await fetch(`${base}/docs/errors`);
      assert.equal(res.status, 200);
      const html = await res.text();
      for (const code of ["invalid_api_key", "episodes_invalid", "retention_expired"]) assert.ok(html.includes(`id="${code}"`), code);
      const md = await fetch(`${base}/docs/errors?format=md`);
      assert.match(md.headers.get("content-type") ?? "", /text\/markdown/);
    });

    it("serves the API docs page", async () => {
      const html = await (await fetch(`${base}/docs/api`)).text();
      assert.match(html, /<table>/);
      assert.match(html, /runs:read or streams:read/);
    });

    it("exposes request metrics by route template", async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      assert.match(text, /assay_http_requests_total\{method="POST",route="\/v1\/runs",status="201"\} \d+/);
      assert.match(text, /route="\/v1\/runs\/:runId"/);
    });
  });
});
