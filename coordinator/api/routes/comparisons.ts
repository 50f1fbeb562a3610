/**
 * GET /v1/comparisons?runs=<id>,<id>[,...] (runs:read): two to six runs side by side, each side's rate
 * with its interval and n, every pair's difference with the statistics of unpaired runs, and a warning
 * when their pins differ (coordinator/leaderboards/compare-selection.ts). Each run must be the caller's or
 * published on a leaderboard; another account's unpublished run is 404, as everywhere.
 *
 * A comparison costs up to half a second of CPU (15 posterior differences), computed in slices with the
 * event loop given a turn between pairs, and kept: the same runs with the same Results (ended runs'
 * never change) answer from the newest COMPARISONS_KEPT without computing again.
 */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { AssayError } from "../../errors/assay-error.js";
import { boardsOfRun } from "../../leaderboards/published-results.js";
import { compareSelection, selectionSides, SELECTION_RUNS_MAX, SELECTION_SIDES_MAX, type SelectedRun, type Selection } from "../../leaderboards/compare-selection.js";
import { isPublishedRun } from "../../store/published-runs-repo.js";
import { getRun } from "../../store/runs-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { ComparisonQuery } from "../schemas/comparisons.js";
import { parseQuery } from "../validate-request.js";

/** Comparisons kept (each a few KB). */
const COMPARISONS_KEPT = 64;

const quoted = (text: string) => JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);

export function comparisonsRouter(deps: CompiledApiDeps, router: Router = Router()): Router {
  const kept = new Map<string, Promise<Selection>>();

  router.get("/comparisons", async (req, res) => {
    const { accountId } = authOf(res);
    const given = parseQuery(ComparisonQuery, req).runs;
    const ids = (given ?? "").split(",").map((id) => id.trim()).filter((id) => id !== "");
    if (ids.length < 2 || ids.length > SELECTION_RUNS_MAX) {
      throw new AssayError("contract_validation_failed", `runs must name 2..${SELECTION_RUNS_MAX} run ids, comma-separated (runs=run_a,run_b); got ${given === undefined ? "none" : quoted(given)}`);
    }
    const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
    if (repeated) throw new AssayError("contract_validation_failed", `runs names ${quoted(repeated)} twice; name each run once`);
    const selected: SelectedRun[] = [];
    for (const id of ids) {
      const run = await getRun(deps.db, id);
      const mine = run !== undefined && run.accountId === accountId;
      // Another account's run is readable only when published; otherwise it is indistinguishable from none.
      if (!run || (!mine && !((await isPublishedRun(deps.db, id)) && (await boardsOfRun(deps.db, run)).length > 0))) {
        throw new AssayError("not_found", `no run ${quoted(id)} on this account or published on a leaderboard`, { runId: id });
      }
      selected.push({ run, published: !mine });
    }
    // Every id is known before any is found wanting: an unknown one is the answer that says the most.
    for (const { run } of selected) {
      if (!run.result || (run.result as { n?: number }).n === undefined) {
        throw new AssayError("contract_validation_failed", `run ${run.id} is ${run.status} and has no result yet; compare it once an episode has finished`, { runId: run.id });
      }
    }
    const sides = selectionSides(selected);
    if (sides.length > SELECTION_SIDES_MAX) {
      throw new AssayError("contract_validation_failed", `these runs make ${sides.length} sides (a compare, transfer or matrix run brings one per unit); at most ${SELECTION_SIDES_MAX} can be compared at once`);
    }
    const empty = sides.find((s) => s.n === 0);
    if (empty) throw new AssayError("contract_validation_failed", `run ${empty.run_id}${empty.unit ? ` (${empty.unit})` : ""} has no finished episode to compare yet`, { runId: empty.run_id });
    // Who sees it is settled above; what it says depends only on the runs and their Results.
    const key = selected.map(({ run, published }) => `${run.id}:${published}:${run.status}:${run.completed ?? ""}:${(run.result as { n: number }).n}`).join(",");
    let answer = kept.get(key);
    if (answer) kept.delete(key);
    else {
      answer = compareSelection(selected, () => new Promise((resolve) => setImmediate(resolve)));
      answer.catch(() => kept.get(key) === answer && kept.delete(key));
    }
    kept.set(key, answer);
    while (kept.size > COMPARISONS_KEPT) kept.delete(kept.keys().next().value!);
    res.json(await answer);
  });

  return router;
}
