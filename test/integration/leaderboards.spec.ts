/**
 * Leaderboards end to end on the simulated fleet: an account opts in under a display name, publishes
 * evals of the expert and the novice on tabletop-basics@1 and a paired compare of the two on
 * pick-cube@v1; anyone reads the boards without a key: both entries with n, intervals and tiers,
 * ordered by the stated rule, the compare's Bradley-Terry fit, the citable reports. Another
 * account's private run never appears; opting out hides the entries, opting in shows them again;
 * a purged run leaves its board; the publisher hears leaderboard.entered.
 */
import assert from "node:assert/strict";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { openBrowserTabs, type BrowserTabs } from "../support/shared-browser.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, waitForRunEnd, type TestService } from "./helpers.js";

type Json = Record<string, any>;

const policy = (image: string) => ({
  type: "container",
  image,
  action_space: { type: "joint_position", dim: 6 },
  observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] },
});

describe("leaderboards: published results, ranked honestly, readable without a key (simulated fleet)", function () {
  this.timeout(400_000);
  let service: TestService;
  let lab: string;
  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  const call = async (path: string, init: { method?: string; json?: unknown; key?: string | null } = {}, status = 200): Promise<Json> => {
    const headers: Record<string, string> = {};
    if (init.key !== null) headers.authorization = `Bearer ${init.key ?? lab}`;
    if (init.json !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(service.coordinator.baseUrl + path, { method: init.method ?? "GET", headers, body: init.json !== undefined ? JSON.stringify(init.json) : undefined });
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, `${init.method ?? "GET"} ${path}: ${JSON.stringify(body)}`);
    return body;
  };
  const publicBoards = () => call("/v1/leaderboards", { key: null });
  const suiteBoard = async () => (await publicBoards()).data.find((b: Json) => b.pins.subject === "tabletop-basics@1" && b.pins.robot === "so101@3.11") as Json | undefined;

  before(async () => {
    // An account of its own: opting in and publishing must not change the shared fleet's default account.
    await ensureAccount(service.coordinator.db, "acct_lab_one", "Lab One Robotics", new Date().toISOString());
    lab = (await createApiKey(service.coordinator.db, "acct_lab_one", ["keys:admin", "runs:read", "runs:write", "data:purge"], new Date())).secret;
  });

  it("lets an account admin opt in under a display name, and needs the name the first time", async () => {
    const account = await call("/v1/account");
    assert.deepEqual(account.leaderboard, { opt_in: false, display_name: null });
    const eval0 = { kind: "eval", suite: "tabletop-basics@1", robots: ["so101@3.11"], policy: policy("assay/ref-policy:expert"), publish: "leaderboard" };
    assert.equal((await call("/v1/runs", { method: "POST", json: eval0 }, 403)).error.code, "publish_forbidden");
    const nameless = await call("/v1/account", { method: "PUT", json: { leaderboard: { opt_in: true } } }, 422);
    assert.match(nameless.error.message, /display_name is required to opt in/);
    const opted = await call("/v1/account", { method: "PUT", json: { leaderboard: { opt_in: true, display_name: "Lab One" } } });
    assert.deepEqual(opted.leaderboard, { opt_in: true, display_name: "Lab One" });
    const reader = (await createApiKey(service.coordinator.db, "acct_lab_one", ["runs:read"], new Date())).secret;
    assert.equal((await call("/v1/account", { key: reader }, 403)).error.code, "insufficient_scope");
  });

  it("ranks the published evals by the lower end of their intervals, in tiers, readable without a key", async () => {
    const evalOf = (image: string, name: string, publish: string) => ({ kind: "eval", suite: "tabletop-basics@1", robots: ["so101@3.11"], policy: policy(image), policy_name: name, publish });
    const expert = await call("/v1/runs", { method: "POST", json: evalOf("assay/ref-policy:expert", "expert-v1", "leaderboard") }, 201);
    const novice = await call("/v1/runs", { method: "POST", json: evalOf("assay/ref-policy:novice", "novice-v1", "leaderboard") }, 201);
    // Another account's run of the same suite, private: it must never appear.
    const other = (await (await service.api("/v1/runs", { method: "POST", json: evalOf("assay/ref-policy:expert", "theirs", "private") })).json()) as Json;
    for (const id of [expert.id, novice.id]) assert.equal((await waitForRunEnd(service.coordinator.baseUrl, lab, id, { deadlineMs: 300_000 })).run.status, "completed");
    assert.equal((await runEnd(service, other.id, { deadlineMs: 300_000 })).run.status, "completed");

    const listed = await suiteBoard();
    assert.ok(listed, "the suite board is listed without a key");
    assert.equal(listed.entries, 2);
    const board = await call(`/v1/leaderboards/${listed.id}`, { key: null });
    assert.equal(board.object, "leaderboard");
    assert.deepEqual(board.pins, { kind: "suite", subject: "tabletop-basics@1", robot: "so101@3.11", environment: null, perturbation_rev: board.pins.perturbation_rev, perturbation: null, instructions: "sampled" });
    assert.match(board.pins.perturbation_rev, /@/);
    assert.deepEqual(board.entries.map((e: Json) => e.policy_name).sort(), ["expert-v1", "novice-v1"]);
    assert.ok(!board.entries.some((e: Json) => e.run_id === other.id), "a private run never appears");
    for (const entry of board.entries) {
      assert.equal(entry.account, "Lab One");
      assert.equal(entry.n, 12);
      assert.equal(entry.success_rate, entry.successes / entry.n);
      assert.ok(entry.ci95[0] <= entry.success_rate && entry.success_rate <= entry.ci95[1]);
      assert.equal(entry.tasks.length, 1);
      assert.equal(entry.tasks[0].task, "pick-cube@v1");
    }
    // The stated rule: ordered by the interval's lower end; ranks 1..m; tiers only separated by the test.
    const lows = board.entries.map((e: Json) => e.ci95[0]);
    assert.deepEqual(lows, [...lows].sort((a, b) => b - a));
    assert.deepEqual(board.entries.map((e: Json) => e.rank), [1, 2]);
    assert.equal(board.ranking.rule.alpha, 0.05);
    assert.match(board.ranking.rule.description, /lower end of each entry's 95% interval/);
    assert.equal(board.ranking.boundaries.length, 1);
    assert.equal(board.entries[1].tier, board.ranking.boundaries[0].separated ? 2 : 1);
    assert.equal(board.bradley_terry, null, "no paired compare on a suite board");

    // The citable report of an entry, without a key and without the customer's cost.
    const report = await call(new URL(board.entries[0].report_url).pathname, { key: null });
    assert.equal(report.object, "report");
    assert.equal(report.run_id, board.entries[0].run_id);
    assert.equal(report.cost, undefined);
    const pdf = await fetch(`${board.entries[0].report_url}?format=pdf`);
    assert.equal(pdf.status, 200);
    assert.equal(Buffer.from(await pdf.arrayBuffer()).subarray(0, 4).toString(), "%PDF");
    await call(`/v1/leaderboards/${listed.id}/entries/${other.id}/report`, { key: null }, 404);

    // The publisher heard where its runs entered.
    const events = await service.coordinator.db.prepare("SELECT data FROM webhook_events WHERE account_id = 'acct_lab_one' AND type = 'leaderboard.entered'").all() as Array<{ data: string }>;
    assert.deepEqual(events.map((e) => JSON.parse(e.data).run_id).sort(), [expert.id, novice.id].sort());
    assert.ok(events.every((e) => JSON.parse(e.data).leaderboards[0].id === listed.id));
  });

  it("shows the board as a console page to a visitor without a key", async () => {
    const board = await suiteBoard();
    assert.ok(board);
    const browser = await openBrowserTabs();
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("console", (message) => { if (message.type() === "error") errors.push(message.text()); });
      page.on("pageerror", (error) => errors.push(String(error)));
      await page.goto(`${service.coordinator.baseUrl}/leaderboards/${board.id}`);
      await page.waitForFunction(() => document.querySelector("main")?.dataset.route?.startsWith("/leaderboards/"), { timeout: 30_000 });
      assert.equal(await page.title(), `Leaderboard ${board.title} · Assay`);
      const text = await page.evaluate(() => document.querySelector("main")!.innerText);
      for (const expected of ["expert-v1", "novice-v1", "Lab One", "n = 12", "tabletop-basics@1", "Error rate controlled"]) assert.ok(text.includes(expected), `the page shows ${expected}`);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });

  it("fits Bradley-Terry strengths to a published paired compare on the task's board", async () => {
    const compare = await call("/v1/runs", {
      method: "POST",
      json: {
        // Two pairs in dim light, seeded: the fit needs one decisive pair (only one policy succeeds), and the novice's
        // fixed colour rule fails in dim light where the expert picks (docs/simulation.md), so both pairs are decisive,
        // and the same every time (a seeded run's episodes are deterministic). Eight unseeded pairs in nominal light
        // needed luck for it (the novice picks about half the cubes there) and cost 16 episodes.
        kind: "compare", robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", episodes: 2, paired: true, publish: "leaderboard",
        perturbation: { lighting: ["dim"], seed: 2 },
        policies: { "expert-v1": policy("assay/ref-policy:expert"), "novice-v1": policy("assay/ref-policy:novice") },
      },
    }, 201);
    assert.equal((await waitForRunEnd(service.coordinator.baseUrl, lab, compare.id, { deadlineMs: 300_000 })).run.status, "completed");
    const summary = (await publicBoards()).data.find((b: Json) => b.pins.kind === "task" && b.pins.subject === "pick-cube@v1" && b.pins.robot === "so101@3.11");
    assert.ok(summary, "the task board");
    const board = await call(`/v1/leaderboards/${summary.id}`, { key: null });
    assert.deepEqual(board.entries.map((e: Json) => e.policy_name).sort(), ["expert-v1", "novice-v1"]);
    const fit = board.bradley_terry;
    assert.ok(fit, "a Bradley-Terry fit");
    assert.deepEqual(fit.policies.map((p: Json) => p.id).sort(), ["Lab One / expert-v1", "Lab One / novice-v1"]);
    assert.equal(fit.components.length, 1, JSON.stringify({ fit, compare: (await call(`/v1/runs/${compare.id}`, {}, 200)).result?.comparison }));
    for (const p of fit.policies) assert.ok(p.ci95[0] <= p.log_strength && p.log_strength <= p.ci95[1]);
  });

  it("hides the entries when the account opts out, shows them again on opting in, and drops a purged run", async () => {
    const before = await suiteBoard();
    assert.ok(before);
    await call("/v1/account", { method: "PUT", json: { leaderboard: { opt_in: false } } });
    assert.equal(await suiteBoard(), undefined, "opting out hides the account's entries");
    await call(`/v1/leaderboards/${before.id}`, { key: null }, 404);
    const back = await call("/v1/account", { method: "PUT", json: { leaderboard: { opt_in: true } } });
    assert.equal(back.leaderboard.display_name, "Lab One", "the name is kept");
    const again = await call(`/v1/leaderboards/${before.id}`, { key: null });
    assert.equal(again.entries.length, 2);
    await call(`/v1/data/${again.entries[1].run_id}`, { method: "DELETE" });
    const after = await call(`/v1/leaderboards/${before.id}`, { key: null });
    assert.deepEqual(after.entries.map((e: Json) => e.run_id), [again.entries[0].run_id], "a purged run leaves its board");
    // Leave the shared service as found: this account off the boards.
    await call("/v1/account", { method: "PUT", json: { leaderboard: { opt_in: false } } });
  });
});
