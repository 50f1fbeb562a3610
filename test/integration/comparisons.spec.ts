/**
 * GET /v1/comparisons (issue 28, item 1): any two or more runs side by side against a real coordinator
 * (no cells: the runs are fixtures with real recordings, ended through the lifecycle). Each side's rate
 * with its interval and n, every pair's unpaired difference (simultaneous over the pairs), a warning
 * when pins differ, a compare run split into its policies; another account's run only when published,
 * else 404; bounded and validated like every query.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { betaBinomialDifference } from "../../coordinator/stats/beta-binomial-difference.js";
import { ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { runCliPiped } from "../support/cli-process.js";
import { insertFixtureRun } from "../support/fixture-run.js";
import { startTestService, TEST_ADMIN_KEY, type TestService } from "./helpers.js";

type Json = Record<string, any>;

describe("GET /v1/comparisons: runs side by side", function () {
  this.timeout(60_000);
  let service: TestService;
  let otherKey: string;

  const get = async (path: string, status = 200, key?: string): Promise<Json> => {
    const res = await service.api(path, key ? { headers: { authorization: `Bearer ${key}` } } : {});
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, `${path}: ${JSON.stringify(body)}`);
    return body;
  };

  before(async () => {
    service = await startTestService();
    const artifacts = join(service.dataDir, "artifacts");
    // Recordings as small as they come: this file reads results, not recordings.
    const tiny = { cameras: [], steps: () => 2 };
    // expert 7 of 8, novice 2 of 8; the third ran with other perturbation settings.
    await insertFixtureRun(service.coordinator, artifacts, "run_cmpexpert000000001", { ...tiny, episodes: 8, outcome: (i) => (i === 3 ? "failure" : "success"), request: { policy_name: "expert" } });
    await insertFixtureRun(service.coordinator, artifacts, "run_cmpnovice000000001", { ...tiny, episodes: 8, outcome: (i) => (i % 4 === 0 ? "success" : "failure"), request: { policy_name: "novice" } });
    await insertFixtureRun(service.coordinator, artifacts, "run_cmpdim00000000001", { ...tiny, episodes: 4, request: { policy_name: "dim", perturbation: { lighting: ["dim"] } } });
    await insertFixtureRun(service.coordinator, artifacts, "run_cmpextra000000001", { ...tiny, episodes: 2, request: { policy_name: "extra" } });
    await insertFixtureRun(service.coordinator, artifacts, "run_cmppaired00000001", { ...tiny, episodes: 8, compare: ["fast", "slow"], outcome: (i) => (i % 2 === 0 || i === 5 ? "success" : "failure") });
    // Another account: one run published on a leaderboard, one not.
    const db = service.coordinator.db;
    await ensureAccount(db, "acct_cmp_other", "Other Lab", new Date().toISOString());
    otherKey = (await createApiKey(db, "acct_cmp_other", ["keys:admin", "runs:read"], new Date())).secret;
    const opted = await service.api("/v1/account", { method: "PUT", json: { leaderboard: { opt_in: true, display_name: "Other Lab" } }, headers: { authorization: `Bearer ${otherKey}` } });
    assert.equal(opted.status, 200, await opted.text());
    await insertFixtureRun(service.coordinator, artifacts, "run_cmppublished00001", { ...tiny, episodes: 4, accountId: "acct_cmp_other", request: { policy_name: "theirs", publish: "leaderboard" } });
    await insertFixtureRun(service.coordinator, artifacts, "run_cmpprivate000001", { ...tiny, episodes: 4, accountId: "acct_cmp_other", request: { policy_name: "private" } });
  });
  after(async () => {
    await service?.stop();
  });

  it("two runs: each rate with its interval and n, the difference with the unpaired rule, one sentence, no warning when pins agree", async () => {
    const c = await get("/v1/comparisons?runs=run_cmpexpert000000001,run_cmpnovice000000001");
    assert.equal(c.object, "comparison");
    assert.deepEqual(c.sides.map((s: Json) => [s.label, s.successes, s.n, s.published]), [["expert", 7, 8, false], ["novice", 2, 8, false]]);
    assert.deepEqual(c.sides[0].wilson95, [0.5291, 0.9776]);
    assert.equal(c.sides[0].text, "expert: 87.5% (7 of 8; 95% Wilson interval 52.9% to 97.8%)");
    const [d] = c.differences;
    // The rule of unpaired compare: each side's posterior over its own cells (fixture cells alternate cell-0, cell-1).
    const expected = betaBinomialDifference([{ k: 4, n: 4 }, { k: 3, n: 4 }], [{ k: 2, n: 4 }, { k: 0, n: 4 }]);
    assert.equal(d.method, "beta-binomial-posterior-difference");
    assert.equal(d.claim, "model");
    assert.equal(d.ci_level, 0.95);
    assert.ok(Math.abs(d.ci[0] - expected.ci[0]) < 1e-3 && Math.abs(d.ci[1] - expected.ci[1]) < 1e-3, JSON.stringify([d.ci, expected.ci]));
    assert.equal(d.these_cells.diff, 0.625);
    assert.equal(d.these_cells.method, "newcombe-hybrid-score");
    assert.match(d.sentence, d.shown === "a_higher"
      ? /^expert's success rate is higher than novice's by \d+ points \(95% interval \d+ to \d+\) for a new cell of the robot model\.$/
      : /^No difference between expert and novice was shown for a new cell of the robot model: /);
    assert.deepEqual(c.pins_differ, []);
    assert.deepEqual(c.warnings, []);
    assert.equal(c.lines[0], d.sentence);
    assert.doesNotMatch(JSON.stringify(c), /\d\.\d{7,}/, "no float noise in the JSON");
  });

  it("three runs and a compare: its policies are two sides, the intervals are simultaneous, differing pins are named", async () => {
    const c = await get("/v1/comparisons?runs=run_cmpexpert000000001,run_cmpdim00000000001,run_cmppaired00000001");
    assert.deepEqual(c.sides.map((s: Json) => [s.label, s.unit, s.successes, s.n]), [["expert", null, 7, 8], ["dim", null, 2, 4], ["fast", "policy:fast", 4, 4], ["slow", "policy:slow", 1, 4]]);
    assert.deepEqual(c.simultaneous, { pairs: 6, family_level: 0.95, ci_level: 0.9917, adjustment: "bonferroni" });
    assert.equal(c.differences.length, 6);
    assert.deepEqual(c.differences.map((d: Json) => `${d.a}-${d.b}`), ["expert-dim", "expert-fast", "expert-slow", "dim-fast", "dim-slow", "fast-slow"]);
    assert.deepEqual(c.pins_differ.map((p: Json) => p.pin), ["perturbation"]);
    assert.match(c.warnings[0], /^The sides differ in perturbation settings \(none, \{"lighting":\["dim"\]\}\): a difference between them may come from the perturbation settings, not the policy\.$/);
    assert.ok(c.lines.includes("The 6 intervals hold together with 95% confidence (Bonferroni: each at 99.2%); the runs were not paired, so each side is modelled on its own cells (beta-binomial posterior)."));
  });

  it("another account's run: compared when published (its cells unnamed), 404 when not, as elsewhere", async () => {
    const c = await get("/v1/comparisons?runs=run_cmpexpert000000001,run_cmppublished00001");
    assert.deepEqual(c.sides.map((s: Json) => [s.label, s.published]), [["expert", false], ["theirs", true]]);
    assert.doesNotMatch(JSON.stringify(c), /cell-0|cell-1|acct_cmp_other/);
    const hidden = await get("/v1/comparisons?runs=run_cmpexpert000000001,run_cmpprivate000001", 404);
    assert.equal(hidden.error.code, "not_found");
    assert.match(hidden.error.message, /no run "run_cmpprivate000001" on this account or published on a leaderboard/);
    // Its owner compares it; the other account's unpublished run is as unknown to it as to anyone.
    assert.equal((await get("/v1/comparisons?runs=run_cmpprivate000001,run_cmppublished00001", 200, otherKey)).sides.length, 2);
    assert.equal((await get("/v1/comparisons?runs=run_cmpprivate000001,run_cmpexpert000000001", 404, otherKey)).error.code, "not_found");
  });

  it("answers what to fix: one run, too many, a repeated id, no query at all", async () => {
    const cases: Array<[string, RegExp]> = [
      ["?runs=run_cmpexpert000000001", /runs must name 2\.\.6 run ids, comma-separated \(runs=run_a,run_b\); got "run_cmpexpert000000001"/],
      ["?runs=a,b,c,d,e,f,g", /runs must name 2\.\.6 run ids/],
      ["", /runs must name 2\.\.6 run ids.*; got none/],
      ["?runs=run_cmpexpert000000001,run_cmpexpert000000001", /runs names "run_cmpexpert000000001" twice; name each run once/],
      [`?runs=${"x".repeat(300)},y`, /runs must name 2\.\.6 run ids|at most/],
    ];
    for (const [query, message] of cases) {
      const body = await get(`/v1/comparisons${query}`, 422);
      assert.equal(body.error.code, "contract_validation_failed");
      assert.match(body.error.message, message);
    }
    // Six runs, but the compare brings two sides: seven, one more than the bound.
    const sides = await get("/v1/comparisons?runs=run_cmppaired00000001,run_cmpexpert000000001,run_cmpnovice000000001,run_cmpdim00000000001,run_cmppublished00001,run_cmpextra000000001", 422);
    assert.match(sides.error.message, /^these runs make 7 sides \(a compare, transfer or matrix run brings one per unit\); at most 6 can be compared at once$/);
    const six = await get("/v1/comparisons?runs=run_cmppaired00000001,run_cmpexpert000000001,run_cmpnovice000000001,run_cmpdim00000000001,run_cmppublished00001");
    assert.equal(six.differences.length, 15);
  });

  it("the CLI says the same: assay compare prints the sides, the differences and the sentences; runs get leads a compare with its headline", async () => {
    const env = { ASSAY_API_KEY: TEST_ADMIN_KEY, ASSAY_BASE_URL: service.coordinator.baseUrl };
    const api = await get("/v1/comparisons?runs=run_cmpexpert000000001,run_cmpnovice000000001");
    const cli = await runCliPiped(["compare", "run_cmpexpert000000001", "run_cmpnovice000000001"], env, service.dataDir);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /^SIDE +RUN +N +RATE +95% WILSON +95% MODEL-LEVEL$/m);
    assert.match(cli.stdout, /^expert +run_cmpexpert000000001 +8 +87\.5% +52\.9% to 97\.8% /m);
    assert.match(cli.stdout, /^DIFFERENCE +NEW CELL +95% INTERVAL +THESE CELLS +95% INTERVAL +SHOWS$/m);
    assert.match(cli.stdout, /^expert - novice +\+\d+(\.\d)? +-?\+?\d+(\.\d)? to \+\d+(\.\d)? +\+\d+(\.\d)? +-?\+?\d+(\.\d)? to \+\d+(\.\d)? +(first higher|no difference shown)$/m);
    // Beside the model-level difference, the raw one on these cells: the rates' own difference (87.5% minus the novice's).
    const points = (x: number) => `${x > 0 ? "+" : ""}${Number((x * 100).toFixed(1))}`;
    const these = api.differences[0].these_cells;
    const novice = api.sides[1];
    assert.ok(Math.abs(these.diff - (0.875 - novice.success_rate)) < 1e-9, JSON.stringify(these));
    assert.ok(cli.stdout.includes(` ${points(these.diff)} `) && cli.stdout.includes(`${points(these.ci[0])} to ${points(these.ci[1])}`), cli.stdout);
    assert.ok(cli.stdout.includes(api.differences[0].sentence), cli.stdout);
    const json = await runCliPiped(["compare", "run_cmpexpert000000001", "run_cmpnovice000000001", "--json"], env, service.dataDir);
    assert.deepEqual(JSON.parse(json.stdout).differences, api.differences);
    const one = await runCliPiped(["compare", "run_cmpexpert000000001"], env, service.dataDir);
    assert.equal(one.code, 3);
    assert.match(one.stderr, /runs must name 2\.\.6 run ids/);

    const run = await get("/v1/runs/run_cmppaired00000001");
    const shown = await runCliPiped(["runs", "get", "run_cmppaired00000001"], env, service.dataDir);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^result +fast - slow: \+\d+(\.\d)? points \(95% interval [-+]?\d+(\.\d)? to \+\d+(\.\d)?\)$/m);
    const lines = shown.stdout.split("\n");
    const first = lines.indexOf(run.result.headline.sentence);
    assert.ok(first > 0, shown.stdout);
    assert.deepEqual(lines.slice(first, first + 3), run.result.headline.lines);
  });
});
