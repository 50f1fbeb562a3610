/**
 * Kind `threshold` end to end: iterate on the soak tier (so101) one episode at a time until the
 * sequential test passes, announce `threshold.crossed`, confirm on the verify tier (fr3) and POST the
 * signed on_verified webhook; a monthly cap stops the run with monthly_budget_exceeded.
 */
import assert from "node:assert/strict";
import { verifySignature } from "../../coordinator/webhooks/signature.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, type TestService } from "./helpers.js";
import { startReceiver, type Receiver } from "./webhook-receiver.js";

const policy = (dim: number) => ({
  type: "container",
  image: "assay/ref-policy:expert",
  action_space: { type: "joint_position", dim },
  observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] },
});

const THRESHOLD = {
  kind: "threshold",
  iterate_on: "so101@3.11",
  escalate_to: "fr3@5.9.0",
  environment: "tabletop@1",
  target: { success_rate: 0.5, ci: 0.8, task: "pick-cube@v1" },
  policy: policy(6),
  escalate_policy: policy(8),
  monthly_cap_usd: 50,
  episodes: 30,
};

describe("kind threshold on a simulated fleet", function () {
  this.timeout(400_000);
  let service: TestService;
  let receiver: Receiver;
  let secret: string;
  let hookId: string | undefined;

  // This file's webhook is deleted again, so the shared fleet is left as found. Defined before useSharedFleet:
  // mocha runs `after` hooks in the order they are defined, and the service must still be up (the last file
  // of a fleet stops it when it releases it).
  after(async () => {
    if (hookId) assert.equal((await service.api(`/v1/webhooks/${hookId}`, { method: "DELETE" })).status, 200);
    await receiver?.close();
  });

  // A so101 soak-tier cell and an fr3 verify-tier cell, shared with money-units.spec.ts and kind-verify.spec.ts.
  useSharedFleet(["so101-b", "fr3-a"], (shared) => (service = shared));

  before(async () => {
    receiver = await startReceiver(() => 200);
    const hook = await service.api("/v1/webhooks", { method: "POST", json: { url: receiver.url, events: ["threshold.crossed"] } });
    assert.equal(hook.status, 201);
    ({ id: hookId, secret } = (await hook.json()) as any);
  });

  it("crosses on the soak tier, confirms on the verify tier and notifies on_verified", async () => {
    // Target 0.3, not 0.5: crossing, confirming and the two notifications are what is checked, and at 0.3 two successes
    // in a row pass each phase's test (at 0.5, five), so the run takes about four episodes, one at a time, not ten.
    const created = await service.api("/v1/runs", { method: "POST", json: { ...THRESHOLD, target: { ...THRESHOLD.target, success_rate: 0.3 }, on_verified: { webhook: receiver.url } } });
    assert.equal(created.status, 201, await created.clone().text());
    const run = (await created.json()) as Record<string, any>;
    assert.deepEqual(run.units.map((u: any) => u.role), ["soak", "verify"]);
    const { run: done } = await runEnd(service, run.id);
    assert.equal(done.status, "completed", JSON.stringify(done.status_detail));
    const t = done.result.threshold;
    assert.equal(t.soak.decision, "pass", JSON.stringify(t));
    assert.ok(t.crossed && t.crossed.n === t.soak.n);
    assert.ok(["verified", "not_confirmed"].includes(t.verdict), t.verdict);
    assert.equal(done.result.units[0].result.n, t.soak.n);
    assert.equal(done.result.units[1].result.n, t.verify.n);
    // The top level is the verify phase (the episodes behind the verdict), never soak and verify pooled.
    assert.deepEqual(done.result.population.units, ["verify"]);
    assert.equal(done.result.n, t.verify.n);
    assert.ok(t.verify.n >= 1);

    const crossed = await receiver.waitFor((list) => list.some((r) => JSON.parse(r.rawBody).data.phase === "soak"));
    const soakEvent = crossed.find((r) => JSON.parse(r.rawBody).data.phase === "soak")!;
    assert.equal(JSON.parse(soakEvent.rawBody).type, "threshold.crossed");
    // Without policy_stream the one policy is tested at the run's whole alpha, and the event says so.
    assert.deepEqual(
      (({ checkpoint, alpha, family_alpha }) => ({ checkpoint, alpha, family_alpha }))(JSON.parse(soakEvent.rawBody).data),
      { checkpoint: 1, alpha: 1 - THRESHOLD.target.ci, family_alpha: 1 - THRESHOLD.target.ci },
    );
    assert.equal(t.error_control.soak_alpha, 1 - THRESHOLD.target.ci);
    assert.ok(verifySignature(secret, String(soakEvent.headers["assay-signature"]), soakEvent.rawBody, Math.floor(Date.now() / 1000)));
    if (t.verdict === "verified") {
      const all = await receiver.waitFor((list) => list.some((r) => JSON.parse(r.rawBody).data.phase === "verified"));
      const verified = all.find((r) => JSON.parse(r.rawBody).data.phase === "verified")!;
      assert.equal(JSON.parse(verified.rawBody).data.run_id, run.id);
      assert.equal(JSON.parse(verified.rawBody).data.robot, "fr3@5.9.0");
      assert.ok(verifySignature(secret, String(verified.headers["assay-signature"]), verified.rawBody, Math.floor(Date.now() / 1000)));
    }
  });

  it("stops at monthly_cap_usd with monthly_budget_exceeded and keeps the partial result", async () => {
    const created = await service.api("/v1/runs", { method: "POST", json: { ...THRESHOLD, monthly_cap_usd: 0.2 } });
    assert.equal(created.status, 201, await created.clone().text());
    const id = ((await created.json()) as any).id;
    // A run without policy_stream spends its whole alpha on the submitted policy: it takes no checkpoints.
    const refused = await service.api(`/v1/runs/${id}/checkpoints`, { method: "POST", json: { policy: policy(6) } });
    assert.equal(refused.status, 422);
    assert.match(((await refused.json()) as any).error.message, /declared no policy_stream.*submit the run with policy_stream/);
    const { run: done } = await runEnd(service, id);
    assert.equal(done.status, "stopped");
    assert.equal(done.status_detail.code, "monthly_budget_exceeded");
    assert.equal(done.result.n, 1);
    // What the stop says was spent is what the Result bills for the month's attempts (all of this run's).
    assert.match(done.status_detail.message, new RegExp(`\\$${done.result.cost_usd.toFixed(2)} spent this month`), `${done.status_detail.message} (Result: $${done.result.cost_usd})`);
  });

  it("takes policy checkpoints pushed by the customer's pipeline and restarts the soak test at each", async () => {
    const novice = { ...policy(6), image: "assay/ref-policy:novice" };
    // At most two episodes a phase: what this test checks (the checkpoint taken, the soak test restarted at it with
    // its share of alpha, no checkpoint after the end) holds whatever the verdict, and the expert's restarted soak
    // test at alpha 0.03 and the verify phase after it took 15-odd episodes, one at a time, under the 30 of THRESHOLD.
    // Two, not one: a novice episode that ends before the push must leave the soak phase open (at one it would end
    // it inconclusive and the push would be refused), as it does under 30.
    const created = await service.api("/v1/runs", {
      method: "POST", json: { ...THRESHOLD, episodes: 2, policy: novice, escalate_policy: policy(8), policy_stream: { webhook: "https://ci.example/checkpoints" } },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const run = (await created.json()) as Record<string, any>;
    const pushed = await service.api(`/v1/runs/${run.id}/checkpoints`, { method: "POST", json: { policy: policy(6) } });
    assert.equal(pushed.status, 202, await pushed.clone().text());
    const checkpoint = (await pushed.json()) as Record<string, any>;
    assert.equal(checkpoint.object, "checkpoint");
    assert.equal(checkpoint.index, 0);
    assert.ok(checkpoint.from_episode >= 1);
    const { run: done } = await runEnd(service, run.id);
    assert.equal(done.result.threshold.checkpoints.length, 1);
    assert.equal(done.result.threshold.checkpoints[0].policy, "assay/ref-policy:expert");
    // Under policy_stream the pushed checkpoint (the run's second policy) gets its share of alpha: 0.2 x 6 / (pi^2 x 4).
    assert.equal(done.result.threshold.error_control.soak_checkpoint, 2);
    assert.ok(Math.abs(done.result.threshold.error_control.soak_alpha - (0.2 * 6) / (Math.PI ** 2 * 4)) < 1e-12);
    const late = await service.api(`/v1/runs/${run.id}/checkpoints`, { method: "POST", json: { policy: policy(6) } });
    assert.equal(late.status, 422);
  });

  it("validates threshold's fields", async () => {
    const tier = await service.api("/v1/runs", { method: "POST", json: { ...THRESHOLD, escalate_to: "so101@3.11", escalate_policy: policy(6) } });
    assert.equal(tier.status, 422);
    assert.match(((await tier.json()) as any).error.message, /escalate_to must be a verify-tier robot/);
    const hook = await service.api("/v1/runs", { method: "POST", json: { ...THRESHOLD, on_verified: { webhook: "https://example.invalid/x" } } });
    assert.equal(hook.status, 422);
    assert.match(((await hook.json()) as any).error.message, /POST \/v1\/webhooks/);
    const missing = await service.api("/v1/runs", { method: "POST", json: { ...THRESHOLD, monthly_cap_usd: undefined } });
    assert.match(((await missing.json()) as any).error.message, /requires monthly_cap_usd/);
  });
});
