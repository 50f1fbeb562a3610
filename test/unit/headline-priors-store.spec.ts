import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAdminKey } from "../../coordinator/auth/bootstrap.js";
import { fleetSamples, headlinePriorOfUnit, headlinePriorsAtSubmission } from "../../coordinator/runs/headline-priors.js";
import { DEFAULT_HEADLINE_PRIOR } from "../../coordinator/stats/beta-binomial-rate.js";
import { DEFAULT_ACCOUNT_ID } from "../../coordinator/store/accounts-repo.js";
import type { Db } from "../../coordinator/store/database.js";
import { markEpisodeDone } from "../../coordinator/store/episodes-repo.js";
import { listCurrentHeadlinePriors, replaceHeadlinePrior } from "../../coordinator/store/headline-priors-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

const HELPED = JSON.stringify({ interventions: [{ t_s: 3.2, kind: "on_stall", detail: "nudged the cube" }] });
const UNHELPED = JSON.stringify({ interventions: [] });

for (const engine of STORE_ENGINES) {
  describe(`headline priors in the store (${engine})`, () => {
    let dir: string;
    let db: Db;
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), "assay-priors-"));
      db = await openTestDatabase(engine, join(dir, "assay.sqlite"));
      await ensureAdminKey(db);
    });
    afterEach(async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** A kind `run` run whose episode i finishes on `outcomes[i].cell` with that outcome and /meta. */
    async function run(id: string, outcomes: Array<{ cell: string; outcome: "success" | "failure"; meta?: string }>, complete: boolean): Promise<void> {
      await runsRepo.insertRun(db, {
        id, accountId: DEFAULT_ACCOUNT_ID, kind: "run", created: "2026-11-27T20:00:00.000Z", request: { policy: {} },
        resolvedPins: { robot: "so101@3.10", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
        plan: { model: "so101", firmware: "3.10", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 },
        priority: "standard", episodesTotal: outcomes.length,
      });
      for (const [i, o] of outcomes.entries()) {
        await markEpisodeDone(db, runsRepo.episodeId(id, i), {
          cellId: o.cell, outcome: o.outcome, failureCluster: null, durationS: 1, resetS: 1, replaySpecJson: null,
          metaJson: o.meta ?? null, evaluationJson: null, finishedAt: "2026-11-27T20:01:00.000Z",
        });
      }
      if (complete) for (const status of ["scheduling", "running", "completed"] as const) await runsRepo.setRunStatus(db, id, status);
    }

    it("reads every completed run's per-cell counts, the policy's own successes only", async () => {
      await run("run_done", [
        { cell: "a", outcome: "success" }, { cell: "a", outcome: "success", meta: HELPED }, { cell: "a", outcome: "failure" },
        { cell: "b", outcome: "success", meta: UNHELPED }, { cell: "b", outcome: "success" }, { cell: "b", outcome: "failure", meta: HELPED },
      ], true);
      await run("run_open", [{ cell: "a", outcome: "success" }, { cell: "b", outcome: "success" }], false);
      const samples = await fleetSamples(db);
      assert.deepEqual([...samples.keys()], ["so101/standard"]);
      const group = samples.get("so101/standard")!;
      assert.equal(group.environmentClass, "standard");
      assert.deepEqual(group.runs, [[{ k: 1, n: 3 }, { k: 2, n: 3 }]], "the helped success is a failure of the policy; the open run is left out");
    });

    it("keeps one current prior per robot model and environment class, and a run gets the one current at submission", async () => {
      const fit = { robotModel: "so101", environmentClass: "standard", family: "beta" as const, parameters: { a: 1.5, b: 20 }, fittedOnRuns: 12, fittedAt: "2026-11-27T21:00:00.000Z" };
      assert.equal(await replaceHeadlinePrior(db, fit), true);
      assert.equal(await replaceHeadlinePrior(db, { ...fit, fittedAt: "2026-11-27T22:00:00.000Z" }), false, "nothing new: no row");
      assert.equal(await replaceHeadlinePrior(db, { ...fit, parameters: { a: 1.2, b: 25 }, fittedOnRuns: 14, fittedAt: "2026-11-27T23:00:00.000Z" }), true);
      const current = await listCurrentHeadlinePriors(db);
      assert.equal(current.length, 1);
      assert.deepEqual(current[0].parameters, { a: 1.2, b: 25 });
      assert.equal(current[0].fittedOnRuns, 14);

      const priors = await headlinePriorsAtSubmission(db, [{ model: "so101", environment: "tabletop@1" }]);
      assert.deepEqual(priors["so101/standard"], {
        rate: DEFAULT_HEADLINE_PRIOR.rate, icc: { family: "beta", parameters: { a: 1.2, b: 25 } }, source: "fleet", fitted_on_runs: 14, fitted_at: "2026-11-27T23:00:00.000Z",
      });
      assert.deepEqual(headlinePriorOfUnit({ headlinePriors: priors }, { model: "so101", environment: "tabletop@1" }), priors["so101/standard"]);
      assert.equal(headlinePriorOfUnit({}, { model: "so101", environment: "tabletop@1" }), DEFAULT_HEADLINE_PRIOR, "runs from before: the default");
    });
  });
}
