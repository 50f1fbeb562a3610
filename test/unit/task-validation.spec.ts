/** Task Spec validation and the task state table, against the real catalogue and a real SQLite store. */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadEnvironments } from "../../coordinator/catalog/environments.js";
import { AssayError } from "../../coordinator/errors/assay-error.js";
import { DEFAULT_ACCOUNT_ID, ensureAccount } from "../../coordinator/store/accounts-repo.js";
import type { Db } from "../../coordinator/store/database.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";
import { canApply, nextTaskStatus, TASK_STATUSES, type TaskOperation } from "../../coordinator/tasks/task-state.js";
import { checkTaskBody, validateTaskSpec } from "../../coordinator/tasks/validate-task.js";

const environments = loadEnvironments();
const BASE = {
  name: "pick-cube-2",
  initial_conditions: { cube: { object: "cube", pose: [0.2, 0, 0.015, 0] } },
  success_predicates: [{ lifted: "pose(cube).z > 0.06 for 1.0s" }],
};

for (const engine of STORE_ENGINES) {
  describe(`task validation (${engine})`, () => {
    let dir: string;
    let db: Db;
    const validate = (body: Record<string, unknown>) => validateTaskSpec(checkTaskBody(body), { db, accountId: DEFAULT_ACCOUNT_ID, environments });
    const rejects = (body: Record<string, unknown>, pattern: RegExp) =>
      assert.rejects(async () => validate(body), (e: unknown) => e instanceof AssayError && e.code === "contract_validation_failed" && pattern.test(e.message));

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), "assay-taskval-"));
      db = await openTestDatabase(engine, join(dir, "assay.sqlite"));
      await ensureAccount(db, DEFAULT_ACCOUNT_ID, "Default", "2026-11-01T00:00:00Z");
    });
    after(async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("fills in defaults", async () => {
      const spec = await validate(BASE);
      assert.equal(spec.visibility, "private");
      assert.equal(spec.environment_class, "standard");
      assert.deepEqual(spec.stages, []);
      assert.equal(spec.instructions, null);
      assert.equal(spec.envelope, null);
      assert.equal(spec.baseline, null);
    });

    it("names the predicate, position and reason of a syntax error", async () => {
      await rejects({ ...BASE, success_predicates: [{ lifted: "time > 1 for 1" }] }, /success_predicates\[0\] "lifted": expected a duration with a time unit.* at 13.*\(position 13\)/);
      await rejects({ ...BASE, stages: [{ a: "time > 1" }, { a: "time > 2" }] }, /duplicate name "a"/);
      await rejects({ ...BASE, success_predicates: [{ a: "time > 1", b: "time > 2" }] }, /exactly one key/);
    });

    it("binds against the union of the class's instruments", async () => {
      await validate({ ...BASE, environment_class: "replica", success_predicates: [{ pushed: "ft.force > 5N" }] });
      await rejects({ ...BASE, environment_class: "bare", stages: [{ pushed: "ft.force > 5N" }], success_predicates: [{ ok: "gripper.holding" }] },
        /stages\[0\] "pushed" needs instrument ft_wrist, which no bare environment has \(bench-bare@1: /);
      await rejects({ ...BASE, environment_class: "bare" }, /"lifted" needs instrument mocap/);
    });

    it("checks objects, poses, randomization and envelope against the class", async () => {
      await rejects({ ...BASE, initial_conditions: { cube: { object: "cube", pose: [0, 0, 0, "x"] } } }, /pose is required/);
      await rejects({ ...BASE, initial_conditions: { cube: { object: "cube", pose: [0, 0, 0, 0], randomize: { z_mm: 3 } } } }, /unknown field initial_conditions.cube.randomize.z_mm/);
      await rejects({ ...BASE, initial_conditions: { plate: { object: "plate", pose: [0, 0, 0, 0] } } }, /"plate" is not stocked/);
      await validate({ ...BASE, environment_class: "replica", initial_conditions: { plate: { object: "plate", pose: [0, 0, 0, 0] } }, success_predicates: [{ up: "height(plate) > 0.1" }] });
      await rejects({ ...BASE, envelope: { lighting: ["disco"] } }, /no environment of the target class has lighting preset "disco"/);
      await rejects({ ...BASE, envelope: { distractors: "zoo@1" } }, /envelope.distractors/);
    });

    it("rejects a kit reference to a kit the account does not have", async () => {
      await rejects({ ...BASE, initial_conditions: { mug: { object: "kit/mug", pose: [0, 0, 0, 0] } } }, /no kit "mug" on this account/);
    });
  });
}

describe("task state", () => {
  const label = { id: "task_1", name: "wipe", rev: null };
  const legal: Record<string, TaskOperation[]> = { draft: ["pilot", "amend"], piloting: ["pilot", "amend", "freeze"], frozen: ["revise"] };

  it("allows exactly the spec's moves plus re-pilot and revise", () => {
    for (const status of TASK_STATUSES) {
      for (const op of ["pilot", "amend", "freeze", "revise"] as TaskOperation[]) assert.equal(canApply(status, op), legal[status]!.includes(op), `${status} ${op}`);
    }
    assert.equal(nextTaskStatus("draft", "pilot", label), "piloting");
    assert.equal(nextTaskStatus("piloting", "freeze", label), "frozen");
    assert.equal(nextTaskStatus("piloting", "amend", label), "piloting");
  });

  it("explains rejected moves with the step to take instead", () => {
    assert.throws(() => nextTaskStatus("frozen", "amend", { id: "task_1", name: "wipe", rev: "wipe@v1" }),
      /task wipe@v1 is frozen and immutable; create the next revision with POST \/v1\/tasks\/task_1\/revise/);
    assert.throws(() => nextTaskStatus("draft", "freeze", label), /pilot the task before freezing it \(POST \/v1\/tasks\/task_1\/pilot\)/);
    assert.throws(() => nextTaskStatus("piloting", "revise", label), /is piloting, not frozen/);
  });
});
