import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { loadEnvironments } from "../../coordinator/catalog/environments.js";
import { seedTasks } from "../../coordinator/tasks/task-catalog.js";
import { AssayError } from "../../coordinator/errors/assay-error.js";
import type { ConnectedCell } from "../../coordinator/cells/fleet-view.js";
import { normalizeRunRequest, type ValidateRunContext } from "../../coordinator/runs/run-request.js";
import { validateRunRequest } from "../../coordinator/lifecycle/validate-run.js";
import { ensureAccount } from "../../coordinator/store/accounts-repo.js";
import type { Db } from "../../coordinator/store/database.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";
import { episodeSeed } from "../../coordinator/store/runs-repo.js";
import { insertTask } from "../../coordinator/store/tasks-repo.js";
import { README_RUN_BODY } from "../fixtures.js";

const BODY = README_RUN_BODY;

for (const engine of STORE_ENGINES) {
  describe(`validate run (${engine})`, () => {
    let dir: string;
    let db: Db;
    let cells: ConnectedCell[];
    let ctx: ValidateRunContext;

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), "assay-validate-"));
      db = await openTestDatabase(engine, join(dir, "assay.sqlite"));
      await seedTasks(db, new Date("2026-11-01T00:00:00Z"));
      await ensureAccount(db, "acct_a", "A", "2026-11-01T00:00:00Z");
      cells = [];
      ctx = {
        db, pins: loadFirmwarePins(), environments: loadEnvironments(), fleet: { connectedCells: async () => cells, assignedEpisodeOf: () => undefined },
        accountId: "acct_a", leaderboardOptIn: false, randomSeed: () => 12345,
      };
    });
    afterEach(async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const with_ = (patch: Record<string, unknown>) => ({ ...BODY, ...patch });
    const withPolicy = (patch: Record<string, unknown>) => ({ ...BODY, policy: { ...BODY.policy, ...patch } });
    async function rejects(body: unknown, code: string, pattern: RegExp | string): Promise<void> {
      try {
        await validateRunRequest(body, ctx);
      } catch (error) {
        assert.ok(error instanceof AssayError, String(error));
        assert.equal(error.code, code, error.message);
        if (typeof pattern === "string") assert.equal(error.message, pattern);
        else assert.match(error.message, pattern);
        return;
      }
      assert.fail(`accepted ${JSON.stringify(body)}`);
    }

    it("accepts the README body and resolves every pin", async () => {
      const run = await validateRunRequest(BODY, ctx);
      assert.deepEqual(run.resolvedPins, { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" });
      assert.deepEqual(run.plan, { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 12345, control_rate_hz: 30, max_duration_s: 20, idle_end_s: 5 });
      assert.equal(run.episodesTotal, 20);
      assert.equal(run.priority, "standard");
      assert.deepEqual(run.request, normalizeRunRequest(BODY));
      assert.deepEqual(run.request.data, { retention: "30d", train_on_failures: false });
    });

    it("resolves a bare task name, another robot, a bare environment name, sizes auto episodes, and seeds from the perturbation", async () => {
      const run = await validateRunRequest(with_({ task: "pick-cube", robot: "fr3@5.9.0", episodes: "auto(ci=0.95, moe=0.05)", perturbation: { seed: 7, lighting: ["dim"], layout_jitter_mm: 5, distractors: "color-blocks@1" }, policy: { ...BODY.policy, action_space: { type: "joint_position", dim: 8 } } }), ctx);
      assert.equal(run.resolvedPins.task, "pick-cube@v1");
      assert.equal(run.episodesTotal, 381);
      assert.equal(run.plan.seed, 7);
      assert.equal(run.resolvedPins.robot, "fr3@5.9.0");
      const bare = await validateRunRequest(with_({ robot: "stretch3@latest", environment: "bench-bare", policy: { ...BODY.policy, action_space: { type: "joint_position", dim: 9 }, observation_contract: { cameras: ["wrist"], state: ["joint_positions", "gripper_state"] } } }), ctx);
      assert.equal(bare.resolvedPins.environment, "bench-bare@1");
    });

    it("refuses a state channel whose instrument the environment lacks", async () => {
      const body = with_({ robot: "stretch3@latest", environment: "bench-bare@1", policy: { ...BODY.policy, action_space: { type: "joint_position", dim: 9 }, observation_contract: { cameras: ["wrist"], state: ["ft_wrist"] } } });
      await rejects(body, "contract_validation_failed", /bench-bare@1 has no ft_wrist instrument for "ft_wrist"/);
    });

    it("environment tabletop (newest: @2) has no cell, so a bare name pointing at it is refused", async () => {
      // tabletop resolves to tabletop@2, where no cell is installed.
      await rejects(with_({ environment: "tabletop" }), "environment_unavailable", /tabletop@2.*installed in: tabletop@1/);
    });

    it("firmware_pin_unavailable: malformed, unknown model, not installed, missing", async () => {
      await rejects(with_({ robot: "so101" }), "firmware_pin_unavailable", /"so101"/);
      await rejects(with_({ robot: "ur5@1.0" }), "firmware_pin_unavailable", /"ur5" is not in the catalog/);
      await rejects(with_({ robot: "fr3@5.7.2" }), "firmware_pin_unavailable", "fr3@5.7.2 is not installed on any cell; installed: fr3@5.9.0");
      await rejects(with_({ robot: undefined }), "firmware_pin_unavailable", /robot is required/);
    });

    it("environment_unavailable: not in the catalogue, or no installation of the pin there", async () => {
      await rejects(with_({ environment: "moon@1" }), "environment_unavailable", /"moon@1" is not in the catalogue; known: tabletop@1/);
      await rejects(with_({ environment: "kitchen-replica@2" }), "environment_unavailable", /has no cell with so101@3\.11; so101@3\.11 is installed in: tabletop@1/);
    });

    it("task_unknown: unknown name, missing revision, draft task, another account's private task", async () => {
      await rejects(with_({ task: "stack-blocks" }), "task_unknown", /"stack-blocks" is not known/);
      await rejects(with_({ task: "pick-cube@v2" }), "task_unknown", /frozen revisions: pick-cube@v1/);
      await insertTask(db, { id: "task_draft", account_id: "acct_a", name: "pour", version: null, status: "draft", visibility: "private", created: "2026-11-01T00:00:00Z", frozen: null, spec: "{}", signatures: "[]", pilot: null });
      await rejects(with_({ task: "pour" }), "task_unknown", /no frozen revision yet \(status draft\)/);
      await rejects(with_({ task: "task_draft" }), "task_unknown", /is draft, not frozen/);
      await ensureAccount(db, "acct_b", "B", "2026-11-01T00:00:00Z");
      await insertTask(db, { id: "task_b", account_id: "acct_b", name: "secret", version: 1, status: "frozen", visibility: "private", created: "2026-11-01T00:00:00Z", frozen: "2026-11-01T00:00:00Z", spec: "{}", signatures: "[]", pilot: null });
      await rejects(with_({ task: "secret@v1" }), "task_unknown", /not a frozen revision visible/);
      assert.equal((await validateRunRequest(with_({ task: "task_pick-cube-v1" }), ctx)).resolvedPins.task, "pick-cube@v1");
    });

    it("episodes_invalid with the exact message", async () => {
      await rejects(with_({ episodes: "auto(ci=2)" }), "episodes_invalid", 'episodes must be a positive integer or auto(ci=<0..1>, moe=<0..1>); got "auto(ci=2)"');
      await rejects(with_({ episodes: -1 }), "episodes_invalid", /got -1/);
    });

    it("units lerobot: accepted for so101, refused elsewhere and for unknown units, use_degrees only with it", async () => {
      const lerobot = { type: "joint_position", dim: 6, units: "lerobot", use_degrees: false };
      const contract = { cameras: ["top", "wrist"], state: ["joint_positions"], units: "lerobot" };
      assert.equal((await validateRunRequest(withPolicy({ action_space: lerobot, observation_contract: contract }), ctx)).resolvedPins.robot.startsWith("so101@"), true);
      const fr3 = (policy: Record<string, unknown>) => with_({ task: "pick-cube", robot: "fr3@5.9.0", policy: { ...BODY.policy, action_space: { type: "joint_position", dim: 8 }, ...policy } });
      await rejects(fr3({ action_space: { type: "joint_position", dim: 8, units: "lerobot" } }), "contract_validation_failed", /policy\.action_space\.units "lerobot" is for an SO-101 follower \(so101\) with an imported LeRobot calibration; fr3 takes radians/);
      await rejects(fr3({ observation_contract: { cameras: ["top"], units: "lerobot" } }), "contract_validation_failed", /policy\.observation_contract\.units "lerobot" is for an SO-101 follower/);
      await rejects(withPolicy({ action_space: { type: "joint_position", dim: 6, units: "furlongs" } }), "contract_validation_failed", /policy\.action_space\.units must be radians \(the default\) or lerobot/);
      await rejects(withPolicy({ action_space: { type: "joint_position", dim: 6, use_degrees: true } }), "contract_validation_failed", /policy\.action_space\.use_degrees applies to units "lerobot" only/);
    });

    it("contract_validation_failed: action space, cameras, state, policy shape", async () => {
      await rejects(withPolicy({ action_space: { type: "joint_position", dim: 7 } }), "contract_validation_failed", /policy\.action_space\.dim must equal so101's 6 degrees of freedom.*got 7/);
      await rejects(withPolicy({ action_space: { type: "ee_pose", dim: 6 } }), "contract_validation_failed", /action_space\.type must be "joint_position"; got "ee_pose"/);
      await rejects(withPolicy({ observation_contract: { cameras: ["side"], state: [] } }), "contract_validation_failed", /tabletop@1 has no camera "side"; its cameras: top, wrist/);
      await rejects(withPolicy({ observation_contract: { cameras: ["top"], state: ["torque"] } }), "contract_validation_failed", /unknown state channel "torque"/);
      await rejects(withPolicy({ type: "lambda" }), "contract_validation_failed", /policy\.type must be one of container, checkpoint, endpoint; got "lambda"/);
      await rejects(withPolicy({ image: undefined }), "contract_validation_failed", /policy\.image is required/);
      await rejects(withPolicy({ gpu: true }), "contract_validation_failed", /unknown field policy\.gpu/);
      await rejects(with_({ policy: { type: "checkpoint", hf: "acme/pi0" } }), "contract_validation_failed", /policy\.runtime is required/);
      await rejects(with_({ policy: { type: "endpoint", url: "https://policy.acme.test" } }), "contract_validation_failed", /latency_budget_ms/);
      await rejects(with_({ policy: undefined }), "contract_validation_failed", /policy is required/);
      await validateRunRequest(with_({ policy: { type: "checkpoint", hf: "acme/pi0", runtime: "lerobot", inference: { action_horizon: 10, chunk_size: 50, temp: 0 } } }), ctx);
      await validateRunRequest(with_({ policy: { type: "endpoint", url: "wss://policy.acme.test", latency_budget_ms: 50 } }), ctx);
    });

    it("contract_validation_failed: a policy image none of the connected cells can run", async () => {
      cells = [{ cellId: "so101-b", model: "so101", firmware: "3.11", environment: "tabletop@1", instruments: [], policyImages: ["assay/ref-policy:random"], state: "idle", dutyCyclePct: 0, connectedAt: "" }];
      await rejects(BODY, "contract_validation_failed", /"assay\/ref-policy:expert" is not available.*they can run: assay\/ref-policy:random/);
    });

    it("contract_validation_failed: kinds, unknown fields, perturbation, data, budget, enums", async () => {
      await rejects(with_({ kind: "eval" }), "contract_validation_failed", /unknown field (robot|environment|task|episodes)/);
      await rejects(with_({ kind: "walk" }), "contract_validation_failed", /kind must be one of/);
      await rejects(with_({ robots: ["so101@latest"] }), "contract_validation_failed", /unknown field robots/);
      await rejects([BODY], "contract_validation_failed", /must be a JSON object; got an array/);
      await rejects(with_({ perturbation: { lighting: ["disco"] } }), "contract_validation_failed", /no lighting preset "disco"/);
      await rejects(with_({ perturbation: { distractors: "zoo@1" } }), "contract_validation_failed", /no distractor set "zoo@1"/);
      await rejects(with_({ perturbation: { layout_jitter_mm: -1 } }), "contract_validation_failed", /layout_jitter_mm must be a number >= 0/);
      await rejects(with_({ perturbation: { seed: 1.5 } }), "contract_validation_failed", /perturbation\.seed/);
      await rejects(with_({ perturbation: { wind: 3 } }), "contract_validation_failed", /unknown field perturbation\.wind/);
      await rejects(with_({ data: { retention: "2y" } }), "contract_validation_failed", /data\.retention.*"2y"/);
      await rejects(with_({ data: { retention: "366d" } }), "contract_validation_failed", /"366d"/);
      await rejects(with_({ data: { train_on_failures: "yes" } }), "contract_validation_failed", /train_on_failures/);
      await rejects(with_({ max_budget_usd: 0 }), "contract_validation_failed", /max_budget_usd must be a positive number/);
      await rejects(with_({ priority: "urgent" }), "contract_validation_failed", /priority must be one of burst, standard, soak; got "urgent"/);
      await rejects(with_({ interventions: "always" }), "contract_validation_failed", /interventions/);
      const ok = await validateRunRequest(with_({ data: { retention: "12h" }, priority: "burst", max_budget_usd: 25, interventions: "on_stall" }), ctx);
      assert.deepEqual(ok.request.data, { retention: "12h", train_on_failures: false });
      assert.equal(ok.priority, "burst");
    });

    it("publish_forbidden for leaderboard without the account's opt-in", async () => {
      await rejects(with_({ publish: "leaderboard" }), "publish_forbidden", /opt-in/);
      await validateRunRequest(with_({ publish: "leaderboard" }), { ...ctx, leaderboardOptIn: true });
    });

    it("derives deterministic 31-bit episode seeds", () => {
      assert.equal(episodeSeed(12345, 0), episodeSeed(12345, 0));
      assert.notEqual(episodeSeed(12345, 0), episodeSeed(12345, 1));
      for (let i = 0; i < 100; i++) assert.ok(episodeSeed(i, i) >= 0 && episodeSeed(i, i) < 2 ** 31);
    });
  });
}
