import assert from "node:assert/strict";
import { computeMeters, environmentClassOf, environmentHours, robotHours, roundCents, roundHours, type MeteredEpisode } from "../../coordinator/runs/meters.js";
import { PRICE_LIST } from "../../coordinator/runs/price-list.js";

function done(durationS: number, resetS: number, interruptions: Array<{ duration_s: number }> = []): MeteredEpisode {
  return { status: "done", durationS, resetS, interruptions: interruptions.map((i) => ({ attempt: 1, cell: "c", reason: "link_lost", detail: "", at: "", ...i })) };
}

describe("meters", () => {
  it("counts episode plus reset time of finished episodes, in hours", () => {
    const episodes = [done(30, 6), done(24, 6)];
    assert.equal(robotHours(episodes), 66 / 3600);
    assert.equal(environmentHours(episodes), 66 / 3600);
  });

  it("counts the robot time of interrupted attempts, also on episodes not yet done", () => {
    const pending: MeteredEpisode = { status: "pending", durationS: null, resetS: null, interruptions: [{ attempt: 1, cell: "c", reason: "estop", detail: "", at: "", duration_s: 12 }] };
    assert.equal(robotHours([done(30, 6, [{ duration_s: 18 }]), pending]), (36 + 18 + 12) / 3600);
  });

  it("prices robot-hours by tier and environment-hours by class, times the priority multiplier", () => {
    // One hour of occupancy on a verify-tier robot in a replica environment at burst priority.
    const episodes = [done(3000, 600)];
    const meters = computeMeters(episodes, { tier: "verify", environmentClass: "replica", priority: "burst" });
    assert.deepEqual(meters, { robotHours: 1, environmentHours: 1, costUsd: (65 + 12) * 1.5 });
    const soak = computeMeters(episodes, { tier: "soak", environmentClass: "standard", priority: "soak" });
    assert.equal(soak.costUsd, 17.6); // (18 + 4) * 0.8
  });

  it("rounds hours to 6 decimals and money to cents, pricing the rounded hours", () => {
    const episodes = [done(10, 0)]; // 0.00277777... h
    const meters = computeMeters(episodes, { tier: "soak", environmentClass: "standard", priority: "standard" });
    assert.equal(meters.robotHours, 0.002778);
    assert.equal(meters.costUsd, roundCents(0.002778 * (PRICE_LIST.robotHourUsd.soak + PRICE_LIST.environmentHourUsd.standard)));
    assert.equal(meters.costUsd, 0.06);
    assert.equal(roundHours(1 / 3), 0.333333);
    assert.equal(roundCents(1.005), 1.01);
  });

  it("an empty run costs nothing", () => {
    assert.deepEqual(computeMeters([], { tier: "verify", environmentClass: "bare", priority: "burst" }), { robotHours: 0, environmentHours: 0, costUsd: 0 });
  });

  it("reads environment classes from the catalogue", () => {
    assert.equal(environmentClassOf("tabletop@1"), "standard");
    assert.equal(environmentClassOf("warehouse-replica@1"), "instrumented-replica");
    assert.equal(environmentClassOf("bench-bare@1"), "bare");
    assert.equal(environmentClassOf("nowhere@1"), undefined);
  });
});
