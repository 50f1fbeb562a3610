/**
 * getRunView (runs-repo.ts), the read behind GET /v1/runs/{run_id}: the view made from it is the
 * same JSON, byte for byte, as the one made from getRun's whole record, for runs of one unit and of
 * several, labelled, ended with a result, failed; and an unknown run is undefined. RunViewBodies
 * (lifecycle/run-view-bodies.ts) gives that JSON text, and a new one once a write or the scheduler's
 * waiting reason changes what the view shows. On both engines.
 */
import assert from "node:assert/strict";
import { runView, type RunWait } from "../../coordinator/lifecycle/run-view.js";
import { RunViewBodies } from "../../coordinator/lifecycle/run-view-bodies.js";
import type { Db } from "../../coordinator/store/database.js";
import { setRunLabels } from "../../coordinator/store/run-list-repo.js";
import { getRun, getRunView, insertRun, setRunResult, setRunStatus, type NewRun } from "../../coordinator/store/runs-repo.js";
import { transact } from "../../coordinator/store/tx.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

const PINS = { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" };
const PLAN = { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 7, control_rate_hz: 30, max_duration_s: 20, idle_end_s: 5 };
const POLICY = { type: "container", image: "assay/ref-policy:expert", action_space: { type: "joint_position", dim: 6 } };
const REQUEST = { kind: "run", robot: "so101@latest", environment: "tabletop@1", task: "pick-cube@v1", episodes: 2, policy: POLICY, priority: "standard", publish: false, interventions: "none" };
const UNIT = (name: string) => ({ key: `policy:${name}`, robot: "so101@3.11", model: "so101", firmware: "3.11", environment: "tabletop@1", task: "pick-cube@v1", policy: POLICY, policy_name: name });

function run(id: string, extra: Partial<NewRun> = {}): NewRun {
  return { id, accountId: "acct_1", kind: "run", created: "2026-11-28T12:00:00.000Z", request: REQUEST, resolvedPins: PINS, plan: PLAN, priority: "standard", episodesTotal: 2, ...extra };
}

for (const engine of STORE_ENGINES) {
  describe(`getRunView: the run's view from its view columns (${engine})`, () => {
    let db: Db;
    beforeEach(async () => {
      db = await openTestDatabase(engine);
      await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z')").run();
    });
    afterEach(() => db.close());

    /** The view of `id` from getRunView, checked byte-identical to the view from getRun's record. */
    async function sameView(id: string, live: { waiting?: RunWait } = {}): Promise<Record<string, unknown>> {
      const whole = await getRun(db, id);
      const read = await getRunView(db, id);
      assert.ok(whole && read, `run ${id} not found`);
      assert.equal(read.accountId, whole.accountId);
      assert.equal(JSON.stringify(runView(read, live)), JSON.stringify(runView(whole, live)));
      return runView(read, live);
    }

    it("shows a queued run of one unit, a labelled one and a waiting one as getRun's record does", async () => {
      await insertRun(db, run("run_a"));
      await insertRun(db, run("run_b", { labels: { name: "é \u2028 named", metadata: { team: "x\"y", "1": "first" } } }));
      await sameView("run_a");
      assert.deepEqual((await sameView("run_b")).metadata, { "1": "first", team: "x\"y" });
      assert.deepEqual((await sameView("run_a", { waiting: { for: "instrument", message: "no cell has so101 now" } })).status_detail, { code: null, message: "no cell has so101 now", waiting_for: "instrument" });
    });

    it("shows a run of several units with its units and its kind's own fields", async () => {
      const request = { kind: "compare", robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", episodes: 2, policies: { a: POLICY, b: POLICY }, paired: true };
      await insertRun(db, run("run_c", {
        kind: "compare", request, plan: { ...PLAN, kind: { compare: { sequential_power: 0.8 } } }, units: [UNIT("a"), UNIT("b")],
        episodes: [{ unit: 0, seed: 1 }, { unit: 1, seed: 1 }],
      }));
      const view = await sameView("run_c");
      assert.deepEqual((view.units as { key: string }[]).map((u) => u.key), ["policy:a", "policy:b"]);
      assert.equal(view.sequential_power, 0.8);
    });

    it("shows an ended run's result and a failed run's status detail", async () => {
      await insertRun(db, run("run_d"));
      await setRunStatus(db, "run_d", "scheduling");
      await setRunStatus(db, "run_d", "running");
      await setRunResult(db, "run_d", { success_rate: 0.5, ci95: [0.1, 0.9], nested: { "2": 1e21, b: [1e-7, -0] }, note: "ü\u2028" });
      await setRunStatus(db, "run_d", "completed", { at: "2026-11-28T13:00:00.000Z" });
      await insertRun(db, run("run_e"));
      await setRunStatus(db, "run_e", "failed", { code: "policy_endpoint_timeout", message: "the policy endpoint did not answer" });
      assert.deepEqual((await sameView("run_d")).result, { success_rate: 0.5, ci95: [0.1, 0.9], nested: { "2": 1e21, b: [1e-7, 0] }, note: "ü\u2028" });
      assert.deepEqual((await sameView("run_e")).status_detail, { code: "policy_endpoint_timeout", message: "the policy endpoint did not answer" });
    });

    it("serves a run's view text while it reads the same, and a new one after each write or change of waiting reason", async () => {
      const bodies = new RunViewBodies();
      await insertRun(db, run("run_f"));
      await insertRun(db, run("run_g"));
      const body = async (id: string, live: { waiting?: RunWait } = {}) => bodies.bodyOf((await getRunView(db, id))!, live);
      const expected = async (id: string, live: { waiting?: RunWait } = {}) => JSON.stringify(runView((await getRun(db, id))!, live));
      for (let i = 0; i < 2; i++) assert.equal(await body("run_f"), await expected("run_f"));
      assert.equal(await body("run_g"), await expected("run_g"));
      assert.equal(bodies.size, 2);
      const waiting = { waiting: { for: "instrument" as const, message: "no cell has so101 now" } };
      assert.equal(await body("run_f", waiting), await expected("run_f", waiting));
      // The same words for another kind of wait are another view (a new object each time: compared by value).
      const recordings = { waiting: { for: "recordings" as const, message: "no cell has so101 now" } };
      assert.equal(JSON.parse(await body("run_f", recordings)).status_detail.waiting_for, "recordings");
      assert.equal(JSON.parse(await body("run_f", { waiting: { ...waiting.waiting } })).status_detail.waiting_for, "instrument");
      assert.equal(await body("run_f"), await expected("run_f"));
      await setRunLabels(db, (await getRun(db, "run_f"))!, { name: "renamed", metadata: { k: "v" } });
      assert.equal(JSON.parse(await body("run_f")).name, "renamed");
      await setRunStatus(db, "run_f", "scheduling");
      assert.equal(await body("run_f"), await expected("run_f"));
      assert.equal(JSON.parse(await body("run_f")).status, "scheduling");
      assert.equal(bodies.size, 2);
    });

    it("is undefined for a run that does not exist", async () => {
      assert.equal(await getRunView(db, "run_missing"), undefined);
    });

    it("reads inside a transaction what the transaction wrote", async () => {
      await insertRun(db, run("run_h"));
      const read = await transact(db, async (tx) => {
        await setRunStatus(tx, "run_h", "scheduling");
        return await getRunView(tx, "run_h");
      });
      assert.equal(read?.status, "scheduling");
      assert.deepEqual(read?.storedColumns, (await getRunView(db, "run_h"))?.storedColumns);
    });
  });
}
