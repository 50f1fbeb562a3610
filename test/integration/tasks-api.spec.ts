/**
 * Tasks end to end over real HTTP: express on port 0, a real SQLite file in a temp dir, a stub fleet
 * (the device the test replaces) and a scheduler that counts kicks. Covers the Task Spec lifecycle
 * (every transition and every rejected one), predicate errors, signatures checked with the published
 * public keys, kits through their technician steps, and signed shipping-label links.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { createApiApp } from "../../coordinator/api/app.js";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { ensureAdminKey } from "../../coordinator/auth/bootstrap.js";
import { CATALOG_ACCOUNT_ID, seedTasks } from "../../coordinator/tasks/task-catalog.js";
import type { FleetView } from "../../coordinator/cells/fleet-view.js";
import { createMetricsRegistry } from "../../coordinator/metrics.js";
import { RunEvents } from "../../coordinator/runs/run-events.js";
import { DEFAULT_ACCOUNT_ID, ensureAccount } from "../../coordinator/store/accounts-repo.js";
import type { Db } from "../../coordinator/store/database.js";
import { getRunRow, setRunResult, setRunStatus } from "../../coordinator/store/runs-repo.js";
import { verifyTaskSignature, parseSignature } from "../../coordinator/tasks/task-signing.js";
import { runEnd, type TestService } from "./helpers.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { DiskStore } from "../../coordinator/storage/disk-store.js";
import { integrationEngine, openTestDatabase } from "../support/test-database.js";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CUBE = { cube: { object: "cube", pose: [0.22, 0, 0.015, 0], tol_mm: 5, randomize: { x_mm: 30, y_mm: 50, yaw_deg: 40 } } };

function taskBody(name: string, extra: Json = {}): Json {
  return {
    name,
    initial_conditions: CUBE,
    success_predicates: [{ lifted: "pose(cube).z > 0.06 for 1.0s" }],
    stages: [{ reached: "distance(gripper, cube) < 0.03" }, { grasped: "gripper.holding" }],
    instructions: { sampled_per_episode: ["pick up the cube"], held_out: ["raise the block"] },
    envelope: { lighting: ["nominal", "dim"], distractors: "none", out_of_scope: ["cubes on an edge"] },
    baseline: { internal_trials: 40, internal_rate: 0.9 },
    ...extra,
  };
}

describe("tasks and kits API (integration)", () => {
  let dir: string;
  let db: Db;
  let server: Server;
  let base: string;
  let admin: string;
  let reader: string;
  let other: string;
  let operator: string;
  let kicks = 0;
  let nowMs = Date.parse("2026-11-02T09:00:00.000Z");
  const tick = (ms = 1000) => { nowMs += ms; };
  const fleet: FleetView = { connectedCells: async () => [], assignedEpisodeOf: () => undefined };

  const call = (path: string, init: RequestInit & { key?: string | null; json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    const key = init.key === undefined ? admin : init.key;
    if (key) headers.set("authorization", `Bearer ${key}`);
    if (init.json !== undefined) headers.set("content-type", "application/json");
    return fetch(base + path, { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
  };
  const post = (path: string, json?: unknown, key?: string) => call(path, { method: "POST", json: json ?? {}, key });
  const ok = async (res: Response, status = 200): Promise<Json> => {
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, JSON.stringify(body));
    return body;
  };
  const expectError = async (res: Response, status: number, code: string, message?: RegExp): Promise<string> => {
    const body = (await res.json()) as { error: Record<string, string> };
    assert.equal(res.status, status, JSON.stringify(body));
    assert.equal(body.error.code, code);
    if (message) assert.match(body.error.message, message);
    return body.error.message;
  };
  const publicKeys = async (): Promise<Map<string, Json>> => {
    const list = await ok(await call("/v1/signing-keys", { key: reader }));
    return new Map((list.data as Json[]).map((k) => [k.id as string, k]));
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-tasks-"));
    db = await openTestDatabase(integrationEngine(), join(dir, "assay.sqlite"));
    await seedTasks(db, new Date("2026-11-01T00:00:00Z"));
    admin = (await ensureAdminKey(db)).secret!;
    const now = new Date(nowMs);
    reader = (await createApiKey(db, DEFAULT_ACCOUNT_ID, ["runs:read"], now)).secret;
    await ensureAccount(db, "acct_other", "Other", now.toISOString());
    other = (await createApiKey(db, "acct_other", ["runs:read", "runs:write", "keys:admin"], now)).secret;
    operator = (await createApiKey(db, CATALOG_ACCOUNT_ID, ["keys:admin", "runs:read"], now)).secret;
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    server.on("request", createApiApp({
      db, fleet, runEvents: new RunEvents(), scheduler: { kick: () => { kicks++; } }, pins: loadFirmwarePins(),
      urls: { baseUrl: base, artifactUrl: `${base}/artifacts`, streamsUrl: "wss://streams.test", docsUrl: `${base}/docs` },
      objects: new DiskStore(join(dir, "artifacts")), metrics: createMetricsRegistry({ defaultMetrics: false }), log: () => {},
      clock: () => new Date(nowMs),
      // This file sends bursts far above the production limits; rate limiting has its own tests.
      rateLimits: { general: { perS: 10_000, burst: 10_000 }, submit: { perS: 10_000, burst: 10_000 } },
    }));
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe("creating a task", () => {
    it("returns 201 with a draft: rev null, no signatures, not frozen, defaults filled in", async () => {
      const task = await ok(await post("/v1/tasks", taskBody("stack-cube")), 201);
      assert.match(task.id, /^task_/);
      assert.equal(task.object, "task");
      assert.equal(task.status, "draft");
      assert.equal(task.rev, null);
      assert.deepEqual(task.signatures, []);
      assert.equal(task.frozen, null);
      assert.equal(task.visibility, "private");
      assert.equal(task.environment_class, "standard");
      assert.deepEqual(task.baseline, { internal_trials: 40, internal_rate: 0.9 });
      assert.equal(task.pilot, null);
    });

    it("needs runs:write", async () => {
      await expectError(await post("/v1/tasks", taskBody("read-only"), reader), 403, "insufficient_scope", /runs:write/);
    });

    it("rejects missing, malformed and unknown fields with contract_validation_failed", async () => {
      await expectError(await post("/v1/tasks", { ...taskBody("x"), name: undefined }), 422, "contract_validation_failed", /name is required/);
      await expectError(await post("/v1/tasks", taskBody("Pick_Cube")), 422, "contract_validation_failed", /name is required.*"Pick_Cube"/);
      await expectError(await post("/v1/tasks", { ...taskBody("x"), colour: "red" }), 422, "contract_validation_failed", /unknown field colour/);
      await expectError(await post("/v1/tasks", { ...taskBody("x"), initial_conditions: undefined }), 422, "contract_validation_failed", /initial_conditions is required/);
      await expectError(await post("/v1/tasks", { ...taskBody("x"), success_predicates: [] }), 422, "contract_validation_failed", /success_predicates.*non-empty/);
      await expectError(await post("/v1/tasks", taskBody("x", { initial_conditions: { cube: { object: "cube", pose: [0, 0, 0] } } })), 422, "contract_validation_failed", /pose is required/);
      await expectError(await post("/v1/tasks", taskBody("x", { initial_conditions: { mug: { object: "mug", pose: [0, 0, 0, 0] } } })), 422, "contract_validation_failed", /"mug" is not stocked.*kit\/<name>/);
      await expectError(await post("/v1/tasks", taskBody("x", { instructions: { sampled_per_episode: ["a"], held_out: ["a"] } })), 422, "contract_validation_failed", /both sampled and held out/);
      await expectError(await post("/v1/tasks", taskBody("x", { baseline: { internal_trials: 10, internal_rate: 1.5 } })), 422, "contract_validation_failed", /internal_rate/);
      await expectError(await post("/v1/tasks", taskBody("x", { environment_class: "moon" })), 422, "contract_validation_failed", /environment_class must be one of/);
    });

    it("reports a predicate syntax error with the predicate's name, the position and the reason", async () => {
      const message = await expectError(
        await post("/v1/tasks", taskBody("bad-syntax", { success_predicates: [{ lifted: "not (time > 1 for 2s)" }] })),
        422, "contract_validation_failed",
      );
      assert.match(message, /success_predicates\[0\] "lifted": expected "\)" at 14, found "for"/);
      assert.match(message, /position 14/);
      await expectError(
        await post("/v1/tasks", taskBody("bad-stage", { stages: [{ grasped: "gripper.hold" }] })),
        422, "contract_validation_failed", /stages\[0\] "grasped": unknown signal "gripper.hold" at 0/,
      );
    });

    it("rejects a predicate that binds to no instrument of the target class, naming it and the instrument", async () => {
      const body = taskBody("bare-lift", { environment_class: "bare", envelope: undefined, stages: [] });
      await expectError(await post("/v1/tasks", body), 422, "contract_validation_failed",
        /success_predicates\[0\] "lifted" needs instrument mocap, which no bare environment has/);
      // The same task without mocap predicates binds to bare.
      const bare = await ok(await post("/v1/tasks", { ...body, success_predicates: [{ grasped: "gripper.holding for 0.5s" }] }), 201);
      assert.equal(bare.environment_class, "bare");
    });

    it("keeps task names to the account that first used them", async () => {
      await expectError(await post("/v1/tasks", taskBody("pick-cube")), 422, "contract_validation_failed", /belongs to another account/);
    });
  });

  describe("reading tasks", () => {
    it("shows the account its own tasks and everyone's published frozen revisions, newest first, paged", async () => {
      tick();
      const mine = await ok(await post("/v1/tasks", taskBody("list-me")), 201);
      const list = await ok(await call("/v1/tasks", { key: reader }));
      assert.equal(list.object, "list");
      assert.equal(list.url, "/v1/tasks");
      assert.equal(list.has_more, false);
      const ids = (list.data as Json[]).map((t) => t.id);
      assert.equal(ids[0], mine.id);
      assert.ok(ids.includes("task_pick-cube-v1"));

      const page1 = await ok(await call("/v1/tasks?limit=1"));
      assert.equal(page1.has_more, true);
      assert.equal(page1.data[0].id, mine.id);
      const page2 = await ok(await call(`/v1/tasks?limit=1&starting_after=${mine.id}`));
      assert.notEqual(page2.data[0].id, mine.id);
      await expectError(await call("/v1/tasks?limit=101"), 422, "contract_validation_failed", /limit/);
      await expectError(await call("/v1/tasks?starting_after=task_nope"), 404, "not_found");

      const theirs = await ok(await call("/v1/tasks", { key: other }));
      const theirIds = (theirs.data as Json[]).map((t) => t.id);
      assert.ok(!theirIds.includes(mine.id), "another account's private draft is not listed");
      assert.ok(theirIds.includes("task_pick-cube-v1"));
    });

    it("finds a task by id or frozen revision, and 404s otherwise", async () => {
      const byRev = await ok(await call("/v1/tasks/pick-cube@v1", { key: reader }));
      assert.equal(byRev.id, "task_pick-cube-v1");
      assert.equal(byRev.rev, "pick-cube@v1");
      assert.equal(byRev.status, "frozen");
      await expectError(await call("/v1/tasks/pick-cube@v9"), 404, "not_found");
      await expectError(await call("/v1/tasks/task_nope"), 404, "not_found");
      const draft = await ok(await post("/v1/tasks", taskBody("private-draft")), 201);
      await expectError(await call(`/v1/tasks/${draft.id}`, { key: other }), 404, "not_found");
    });

    it("never shows the baseline to another account", async () => {
      const asOther = await ok(await call("/v1/tasks/pick-cube@v1", { key: other }));
      assert.equal("baseline" in asOther, false);
      assert.equal("baseline_check" in asOther, false);
      await expectError(await post("/v1/tasks/pick-cube@v1/amend", { visibility: "private" }, other), 404, "not_found");
    });

    it("signs the seeded pick-cube@v1 with the catalogue account's key and the service key", async () => {
      const task = await ok(await call("/v1/tasks/pick-cube@v1", { key: reader }));
      const keys = await publicKeys();
      assert.equal(task.signatures.length, 2);
      const owners = (task.signatures as string[]).map((s) => keys.get(parseSignature(s)!.keyId)!.owner);
      assert.deepEqual(owners, [CATALOG_ACCOUNT_ID, "service"]);
      for (const signature of task.signatures as string[]) {
        assert.ok(verifyTaskSignature(task, signature, keys.get(parseSignature(signature)!.keyId)!.public_key_pem));
      }
    });
  });

  describe("lifecycle", () => {
    let taskId: string;
    let pilotRunId: string;

    it("refuses to freeze a draft", async () => {
      taskId = (await ok(await post("/v1/tasks", taskBody("wipe-table")), 201)).id;
      await expectError(await post(`/v1/tasks/${taskId}/freeze`), 422, "contract_validation_failed", /is a draft; pilot the task before freezing it/);
      await expectError(await post(`/v1/tasks/${taskId}/revise`), 422, "contract_validation_failed", /is draft, not frozen/);
    });

    it("amends a draft without recording an amendment", async () => {
      const amended = await ok(await post(`/v1/tasks/${taskId}/amend`, { visibility: "published" }));
      assert.equal(amended.status, "draft");
      assert.equal(amended.visibility, "published");
      assert.equal(amended.pilot, null);
    });

    it("validates a pilot request before anything runs", async () => {
      const before = kicks;
      await expectError(await post(`/v1/tasks/${taskId}/pilot`, {}), 422, "firmware_pin_unavailable", /robot is required/);
      await expectError(await post(`/v1/tasks/${taskId}/pilot`, { robot: "so101@latest", episodes: 51 }), 422, "episodes_invalid", /1 to 50/);
      await expectError(await post(`/v1/tasks/${taskId}/pilot`, { robot: "stretch3@latest" }), 422, "environment_unavailable", /no standard environment has a cell with stretch3/);
      await expectError(await post(`/v1/tasks/${taskId}/pilot`, { robot: "so101@latest", policy: { type: "container", image: "x", action_space: { type: "joint_position", dim: 9 }, observation_contract: { cameras: [] } } }),
        422, "contract_validation_failed", /dim": 6/);
      await expectError(await post(`/v1/tasks/${taskId}/pilot`, { robot: "so101@latest", speed: 2 }), 422, "contract_validation_failed", /unknown field speed/);
      assert.equal(kicks, before);
      assert.equal((await ok(await call(`/v1/tasks/${taskId}`))).status, "draft");
    });

    it("pilots a draft: a calibration run starts, marked pilot, and the stream URL is returned", async () => {
      const before = kicks;
      const pilot = await ok(await post(`/v1/tasks/${taskId}/pilot`, { robot: "so101@latest", episodes: 10 }));
      assert.match(pilot.run_id, /^run_/);
      assert.equal(pilot.robot, "so101@3.11");
      assert.equal(pilot.episodes, 10);
      // A signed URL that follows the pilot run to whichever cell runs it (docs/api.md, Live streams).
      assert.match(pilot.stream_url, new RegExp(`^wss://streams\\.test/runs/${pilot.run_id}\\?token=[A-Za-z0-9_-]+\\.[0-9a-f]{64}$`));
      assert.equal(kicks, before + 1);
      pilotRunId = pilot.run_id;

      const run = (await getRunRow(db, pilotRunId))!;
      assert.equal(JSON.parse(run.plan).pilot, true);
      assert.equal(JSON.parse(run.resolved_pins).task, taskId, "the scheduler looks the draft up by id");
      assert.equal(run.episodes_total, 10);
      const request = JSON.parse(run.request) as Json;
      assert.equal(request.policy.image, "assay/ref-policy:expert");
      assert.deepEqual(request.policy.observation_contract.cameras, ["top", "wrist"]);

      const task = await ok(await call(`/v1/tasks/${taskId}`));
      assert.equal(task.status, "piloting");
      assert.deepEqual(task.pilot, { run_id: pilotRunId, robot: "so101@3.11", episodes: 10, amendments: [] });
    });

    it("amends while piloting, recording which fields changed; a bad amendment changes nothing", async () => {
      tick();
      const amended = await ok(await post(`/v1/tasks/${taskId}/amend`, {
        success_predicates: [{ lifted: "pose(cube).z > 0.05 for 1.0s" }], visibility: "published",
      }));
      assert.equal(amended.status, "piloting");
      assert.deepEqual(amended.pilot.amendments, [{ at: new Date(nowMs).toISOString(), fields: ["success_predicates"] }]);
      await expectError(await post(`/v1/tasks/${taskId}/amend`, { stages: [{ up: "height(cube) > 3kg" }] }), 422, "contract_validation_failed", /unknown unit "kg"/);
      await expectError(await post(`/v1/tasks/${taskId}/amend`, { rev: "x@v1" }), 422, "contract_validation_failed", /unknown field rev/);
      const unchanged = await ok(await call(`/v1/tasks/${taskId}`));
      assert.equal(unchanged.stages.length, 2);
      assert.equal(unchanged.pilot.amendments.length, 1);
    });

    it("flags a baseline that disagrees with the completed pilot", async () => {
      assert.equal("baseline_check" in (await ok(await call(`/v1/tasks/${taskId}`))), false, "no check before the pilot completes");
      for (const status of ["scheduling", "running", "completed"] as const) assert.ok(await setRunStatus(db, pilotRunId, status));
      await setRunResult(db, pilotRunId, { n: 10, success_rate: 0.5, ci95: [0.2366, 0.7634], interval_method: "wilson" });
      const task = await ok(await call(`/v1/tasks/${taskId}`));
      assert.equal(task.baseline_check.pilot_rate, 0.5);
      assert.equal(task.baseline_check.internal_rate, 0.9);
      assert.ok(task.baseline_check.pilot_ci95[0] < 0.25 && task.baseline_check.pilot_ci95[1] > 0.75);
      assert.equal(task.baseline_check.disagrees, true);
    });

    it("pilots again while piloting, keeping the amendment history", async () => {
      const again = await ok(await post(`/v1/tasks/${taskId}/pilot`, { robot: "so101@3.11", episodes: 4, environment: "tabletop@1" }));
      const task = await ok(await call(`/v1/tasks/${taskId}`));
      assert.equal(task.pilot.run_id, again.run_id);
      assert.equal(task.pilot.episodes, 4);
      assert.equal(task.pilot.amendments.length, 1);
    });

    it("freezes at <name>@v1 with both signatures, verifiable with the published keys; a tampered spec fails", async () => {
      tick();
      const frozen = await ok(await post(`/v1/tasks/${taskId}/freeze`));
      assert.equal(frozen.status, "frozen");
      assert.equal(frozen.rev, "wipe-table@v1");
      assert.equal(frozen.frozen, new Date(nowMs).toISOString());
      assert.equal(frozen.signatures.length, 2);
      const keys = await publicKeys();
      const [customer, service] = (frozen.signatures as string[]).map((s) => parseSignature(s)!);
      assert.equal(keys.get(customer!.keyId)!.owner, DEFAULT_ACCOUNT_ID);
      assert.equal(keys.get(service!.keyId)!.owner, "service");
      for (const signature of frozen.signatures as string[]) {
        const pem = keys.get(parseSignature(signature)!.keyId)!.public_key_pem as string;
        assert.ok(verifyTaskSignature(frozen, signature, pem), "genuine spec verifies");
        const tampered = { ...frozen, success_predicates: [{ lifted: "pose(cube).z > 0.01 for 1.0s" }] };
        assert.equal(verifyTaskSignature(tampered, signature, pem), false, "tampered spec fails");
        assert.ok(verifyTaskSignature({ ...frozen, baseline: { internal_trials: 1, internal_rate: 0 } }, signature, pem), "baseline is not signed");
      }
      const single = await ok(await call(`/v1/signing-keys/${service!.keyId}`, { key: reader }));
      assert.equal(single.algorithm, "ed25519");
      await expectError(await call("/v1/signing-keys/sk_nope", { key: reader }), 404, "not_found");
    });

    it("rejects every change to a frozen task", async () => {
      await expectError(await post(`/v1/tasks/${taskId}/amend`, { visibility: "private" }), 422, "contract_validation_failed",
        new RegExp(`task wipe-table@v1 is frozen and immutable; create the next revision with POST /v1/tasks/${taskId}/revise`));
      await expectError(await post("/v1/tasks/wipe-table@v1/amend", { visibility: "private" }), 422, "contract_validation_failed", /frozen and immutable/);
      await expectError(await post(`/v1/tasks/${taskId}/pilot`, { robot: "so101@latest" }), 422, "contract_validation_failed", /frozen and immutable/);
      await expectError(await post(`/v1/tasks/${taskId}/freeze`), 422, "contract_validation_failed", /frozen and immutable/);
      await expectError(await post(`/v1/tasks/${taskId}/freeze`, { now: true }), 422, "contract_validation_failed");
    });

    it("revises a frozen task into a new draft that freezes as the next revision", async () => {
      tick();
      const draft = await ok(await post(`/v1/tasks/${taskId}/revise`), 201);
      assert.notEqual(draft.id, taskId);
      assert.equal(draft.name, "wipe-table");
      assert.equal(draft.status, "draft");
      assert.equal(draft.rev, null);
      assert.deepEqual(draft.success_predicates, [{ lifted: "pose(cube).z > 0.05 for 1.0s" }]);
      await ok(await post(`/v1/tasks/${draft.id}/pilot`, { robot: "so101@latest", episodes: 2 }));
      const v2 = await ok(await post(`/v1/tasks/${draft.id}/freeze`));
      assert.equal(v2.rev, "wipe-table@v2");
      assert.equal((await ok(await call("/v1/tasks/wipe-table@v1"))).id, taskId);
      assert.equal((await ok(await call("/v1/tasks/wipe-table@v2"))).id, draft.id);
      // Published and frozen: another account can read it, without the baseline.
      const seen = await ok(await call("/v1/tasks/wipe-table@v2", { key: other }));
      assert.equal("baseline" in seen, false);
      assert.equal(seen.pilot.run_id, undefined);
    });

    it("lets a run pin the frozen revision", async () => {
      const res = await post("/v1/runs", {
        robot: "so101@latest", environment: "tabletop@1", task: "wipe-table@v2", episodes: 3,
        policy: { type: "container", image: "assay/ref-policy:expert", action_space: { type: "joint_position", dim: 6 }, observation_contract: { cameras: ["top"], state: [] } },
      });
      const run = await ok(res, 201);
      assert.equal(run.resolved_pins.task, "wipe-table@v2");
    });
  });

  describe("another account's unfrozen tasks", () => {
    it("cannot be told apart from a name nobody uses, even when marked published", async () => {
      const draft = await ok(await post("/v1/tasks", taskBody("secret-recipe", { visibility: "published" })), 201);
      const runBody = (task: string) => ({
        robot: "so101@latest", environment: "tabletop@1", task, episodes: 1,
        policy: { type: "container", image: "assay/ref-policy:expert", action_space: { type: "joint_position", dim: 6 }, observation_contract: { cameras: ["top"], state: [] } },
      });
      for (const task of ["secret-recipe", draft.id]) {
        const theirs = await expectError(await post("/v1/runs", runBody(task), other), 422, "task_unknown", /is not known to this account/);
        const nobody = await expectError(await post("/v1/runs", runBody(task === draft.id ? "task_nobodyHasThisId000" : "nobody-uses-this"), other), 422, "task_unknown", /is not known to this account/);
        assert.equal(theirs.replace(/"[^"]+"/, "X"), nobody.replace(/"[^"]+"/, "X"));
      }
      await expectError(await call(`/v1/tasks/${draft.id}`, { key: other }), 404, "not_found");
    });
  });

  describe("kits", () => {
    let kitId: string;

    it("registers a kit with a label URL", async () => {
      const kit = await ok(await post("/v1/kits", { name: "mug-set", items: [{ desc: "ceramic mug", qty: 2 }, { desc: "saucer", qty: 1 }] }), 201);
      kitId = kit.id;
      assert.match(kit.id, /^kit_/);
      assert.equal(kit.object, "kit");
      assert.equal(kit.status, "registered");
      assert.deepEqual(kit.status_history, [{ status: "registered", at: new Date(nowMs).toISOString() }]);
      assert.equal(kit.tracking, null);
      assert.equal(kit.environment_ref, null);
      assert.equal(kit.shipping_label_url, `${base}/v1/kits/${kit.id}/shipping-label`);
      assert.equal((await ok(await call(`/v1/kits/${kitId}`, { key: reader }))).id, kitId);
      assert.equal((await ok(await call("/v1/kits", { key: reader }))).data[0].id, kitId);
      await expectError(await call(`/v1/kits/${kitId}`, { key: other }), 404, "not_found");
    });

    it("rejects bad kit bodies and duplicate names", async () => {
      await expectError(await post("/v1/kits", { name: "mug-set", items: [{ desc: "x", qty: 1 }] }), 422, "contract_validation_failed", /already has a kit named "mug-set"/);
      await expectError(await post("/v1/kits", { name: "Mugs!", items: [{ desc: "x", qty: 1 }] }), 422, "contract_validation_failed", /name is required/);
      await expectError(await post("/v1/kits", { name: "mugs", items: [{ desc: "x", qty: 0 }] }), 422, "contract_validation_failed", /items\[0\]\.qty must be a positive integer/);
      await expectError(await post("/v1/kits", { name: "mugs", items: [] }), 422, "contract_validation_failed", /items is required/);
    });

    it("only lets a task reference kit/<name> once the kit is available", async () => {
      const body = taskBody("pour-mug", { initial_conditions: { mug: { object: "kit/mug-set", pose: [0.2, 0, 0, 0] } }, success_predicates: [{ up: "pose(mug).z > 0.05" }], stages: [] });
      await expectError(await post("/v1/tasks", body), 422, "contract_validation_failed", /kit "mug-set" \(kit_\w+\) is registered, not available/);
      await expectError(await post("/v1/tasks", { ...body, initial_conditions: { mug: { object: "kit/nope", pose: [0, 0, 0, 0] } } }), 422, "contract_validation_failed", /no kit "nope"/);

      await expectError(await post(`/v1/kits/${kitId}/receive`, {}, admin), 403, "insufficient_scope", /technician operation/);
      await expectError(await post(`/v1/kits/${kitId}/receive`, {}, reader), 403, "insufficient_scope", /keys:admin/);
      await expectError(await post(`/v1/kits/${kitId}/make-available`, {}, operator), 422, "contract_validation_failed",
        new RegExp(`is registered; cannot make-available it: the next step is POST /v1/kits/${kitId}/receive`));
      tick();
      const received = await ok(await post(`/v1/kits/${kitId}/receive`, {}, operator));
      assert.equal(received.status, "received");
      await expectError(await post(`/v1/kits/${kitId}/receive`, {}, operator), 422, "contract_validation_failed", /is received; cannot receive it: the next step is .*\/track/);
      await expectError(await post(`/v1/kits/${kitId}/track`, { mocap_markers: 2, mass_g: 350, mesh_scan: true }, operator), 422, "contract_validation_failed", /mocap_markers must be an integer >= 3/);
      await expectError(await post(`/v1/kits/${kitId}/track`, { mocap_markers: 4, mass_g: 0, mesh_scan: true }, operator), 422, "contract_validation_failed", /mass_g/);
      tick();
      const tracked = await ok(await post(`/v1/kits/${kitId}/track`, { mocap_markers: 4, mass_g: 350, mesh_scan: true }, operator));
      assert.deepEqual(tracked.tracking, { mocap_markers: 4, mass_g: 350, mesh_scan: true });
      assert.equal(tracked.environment_ref, null);
      await expectError(await post("/v1/tasks", body), 422, "contract_validation_failed", /is tracked, not available/);
      tick();
      const available = await ok(await post(`/v1/kits/${kitId}/make-available`, {}, operator));
      assert.equal(available.environment_ref, "kit/mug-set");
      assert.deepEqual((available.status_history as Json[]).map((h) => h.status), ["registered", "received", "tracked", "available"]);
      await expectError(await post(`/v1/kits/${kitId}/make-available`, {}, operator), 422, "contract_validation_failed", /is available; cannot make-available it: it is available and has no further step/);
      await expectError(await post("/v1/kits/kit_nope/receive", {}, operator), 404, "not_found");

      const task = await ok(await post("/v1/tasks", body), 201);
      assert.equal(task.initial_conditions.mug.object, "kit/mug-set");
      // Another account has no kit of that name.
      await expectError(await post("/v1/tasks", { ...body, name: "their-mug" }, other), 422, "contract_validation_failed", /no kit "mug-set"/);
    });

    it("serves the label PDF behind a signed link that expires after 24 h", async () => {
      const label = await ok(await call(`/v1/kits/${kitId}/shipping-label`, { key: reader }));
      assert.equal(Date.parse(label.expires), Math.floor((nowMs + 24 * 3600 * 1000) / 1000) * 1000);
      assert.ok((label.url as string).startsWith(`${base}/labels/${kitId}.pdf?expires=`));

      const pdf = await fetch(label.url as string);
      assert.equal(pdf.status, 200);
      assert.equal(pdf.headers.get("content-type"), "application/pdf");
      const bytes = Buffer.from(await pdf.arrayBuffer());
      assert.equal(bytes.subarray(0, 4).toString("latin1"), "%PDF");
      assert.ok(bytes.length > 1000);

      const tampered = (label.url as string).replace(/sig=([0-9a-f])/, (_m, c: string) => `sig=${c === "0" ? "1" : "0"}`);
      await expectError(await fetch(tampered), 403, "insufficient_scope", /not validly signed/);
      await expectError(await fetch(`${base}/labels/${kitId}.pdf`), 403, "insufficient_scope");
      const otherKit = (label.url as string).replace(kitId, "kit_AAAAAAAAAAAAAAAA");
      await expectError(await fetch(otherKit), 403, "insufficient_scope");

      tick(24 * 3600 * 1000 + 1000);
      await expectError(await fetch(label.url as string), 410, "retention_expired", /expired/);
      const fresh = await ok(await call(`/v1/kits/${kitId}/shipping-label`, { key: reader }));
      assert.equal((await fetch(fresh.url as string)).status, 200);
    });
  });
});

describe("a task pilot on a simulated fleet (integration)", function () {
  this.timeout(240_000);
  let service: TestService;
  // The suite's shared fleet: this pilot only submits work and reads results (its task is its own, "lift-cube").
  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  it("runs a draft's calibration run through the scheduler and compares the pilot with the baseline", async () => {
    const created = await service.api("/v1/tasks", { method: "POST", json: taskBody("lift-cube") });
    const task = (await created.json()) as Json;
    assert.equal(created.status, 201, JSON.stringify(task));
    const started = await service.api(`/v1/tasks/${task.id}/pilot`, { method: "POST", json: { robot: "so101@latest", episodes: 4 } });
    const pilot = (await started.json()) as Json;
    assert.equal(started.status, 200, JSON.stringify(pilot));

    const { status, events: seen, run } = await runEnd(service, pilot.run_id);
    assert.equal(status, "completed", JSON.stringify(seen));

    assert.equal(run.task, task.id);
    assert.equal(run.result.n, 4);
    const after = (await (await service.api(`/v1/tasks/${task.id}`)).json()) as Json;
    assert.equal(after.status, "piloting");
    assert.equal(after.baseline_check.pilot_run_id, pilot.run_id);
    assert.equal(after.baseline_check.pilot_n, 4);
    assert.equal(after.baseline_check.pilot_rate, run.result.success_rate);
    assert.equal(after.baseline_check.internal_rate, 0.9);
    const [low, high] = after.baseline_check.pilot_ci95 as [number, number];
    assert.equal(after.baseline_check.disagrees, 0.9 < low || 0.9 > high);
  });
});
