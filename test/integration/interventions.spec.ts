/**
 * `interventions: "on_stall"` end to end on a simulated fleet: the novice policy misses its cube (dim
 * light, look-alike blocks), then holds still; after 5 s without progress the cell agent asks the
 * simulated technician for a nudge (re-home, cube back into place) and goes on. Results count the
 * interventions with their timestamps, the episode JSON flags intervened episodes, the headline counts
 * an intervened episode as a failure of the policy and the assisted rate is reported beside it; the
 * report shows the same figures.
 */
import assert from "node:assert/strict";
import { McapIndexedReader } from "@mcap/core";
import { loadMcapCompression } from "../../protocol/recording/mcap-compression.js";
import { wilsonInterval } from "../../coordinator/stats/wilson.js";
import { README_RUN_BODY } from "../fixtures.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, type TestService } from "./helpers.js";

/**
 * Seeded so both groups occur: of the first six novice episodes at this seed, 1 succeeded clean and the
 * other 5 missed and stalled (two nudges each, at ~8 s and ~17.5 s, then the 20 s timeout). Three
 * episodes keep both groups (episodes 0 and 2 stalled, 1 clean) and two intervened episodes, so the counts
 * and timestamps are summed over more than one; the other three were 20 s episodes more of the same. The
 * assertions below hold for any split.
 */
const PERTURBATION = { layout_jitter_mm: 10, lighting: ["nominal", "dim"], distractors: "color-blocks@1", seed: 20251122 };
const EPISODES = 3;

describe("interventions on_stall (simulated fleet, novice policy)", function () {
  this.timeout(300_000);
  let service: TestService;

  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  it("nudges stalled episodes, ships counts and timestamps, flags them and rates the others apart", async () => {
    const body = {
      ...README_RUN_BODY, episodes: EPISODES, perturbation: PERTURBATION, interventions: "on_stall",
      policy: { ...README_RUN_BODY.policy, image: "assay/ref-policy:novice" },
    };
    const created = await service.api("/v1/runs", { method: "POST", json: body });
    assert.equal(created.status, 201, await created.clone().text());
    const run = (await created.json()) as Record<string, any>;
    const { run: done } = await runEnd(service, run.id);
    assert.equal(done.status, "completed", JSON.stringify(done.status_detail));
    assert.equal(done.interventions, "on_stall");
    const { result } = done;
    const iv = result.interventions;
    assert.equal(iv.mode, "on_stall");
    assert.ok(iv.count >= 1, `some novice episode stalled; result ${JSON.stringify(result)}`);
    assert.equal(iv.timestamps.length, iv.count);
    for (const t of iv.timestamps) {
      assert.equal(t.kind, "on_stall");
      // A stall is 5 s without progress, and the episode lasts at most 20 s.
      assert.ok(t.t_s >= 5 && t.t_s < 20, `intervention at ${t.t_s} s`);
    }

    // The episode JSON flags exactly the intervened episodes, with their interventions.
    const episodes = ((await (await service.api(`/v1/runs/${run.id}/episodes`)).json()) as { data: any[] }).data;
    assert.equal(episodes.length, EPISODES);
    const flagged = episodes.filter((e) => e.intervened === true);
    assert.equal(flagged.length, iv.episodes_intervened);
    assert.deepEqual(new Set(flagged.map((e) => e.id)), new Set(iv.timestamps.map((t: any) => t.episode)));
    assert.equal(flagged.reduce((sum, e) => sum + e.interventions.length, 0), iv.count);
    for (const e of flagged) assert.ok(e.interventions.every((i: any) => i.kind === "on_stall" && typeof i.detail === "string" && i.detail.length > 0));
    for (const e of episodes.filter((x) => !x.intervened)) assert.equal(e.interventions, undefined);

    // The headline counts the policy's own outcome: an intervened episode is a failure, even when
    // it ended in success with help; `assisted` counts those successes and is reported beside it.
    const unassisted = episodes.filter((e) => e.outcome === "success" && !e.intervened).length;
    const helped = flagged.filter((e) => e.outcome === "success").length;
    assert.equal(result.n, EPISODES);
    assert.equal(result.success_rate, unassisted / EPISODES);
    assert.equal(iv.assisted_successes, helped);
    assert.equal(result.assisted.n, EPISODES);
    assert.equal(result.assisted.success_rate, (unassisted + helped) / EPISODES);
    assert.deepEqual(result.assisted.ci95, wilsonInterval(unassisted + helped, EPISODES));
    if (helped > 0) assert.equal(result.failure_clusters.intervened, helped - flagged.filter((e) => e.outcome === "success" && e.failure_cluster).length);
    assert.equal(result.cells.by_cell.reduce((sum: number, c: any) => sum + c.n, 0), EPISODES);
    assert.equal(result.cells.by_cell.reduce((sum: number, c: any) => sum + c.successes, 0), unassisted);

    // The report shows the same figures.
    const report = (await (await service.api(`/v1/runs/${run.id}/report`)).json()) as Record<string, any>;
    assert.equal(report.interventions.count, iv.count);
    assert.equal(report.interventions.episodes_intervened, iv.episodes_intervened);
    assert.equal(report.interventions.assisted_successes, helped);
    const headline = { n: result.n, success_rate: result.success_rate, ci95: result.ci95, interval_method: result.interval_method };
    assert.deepEqual(report.result, headline);
    assert.deepEqual(report.interventions.unassisted, headline);
    assert.deepEqual(report.interventions.assisted, result.assisted);
    assert.deepEqual(report.interventions.events, iv.timestamps);
    assert.deepEqual(report.cells, result.cells);

    // The recording carries each intervention on /events and in the end /meta.
    const stalled = flagged[0];
    const bytes = new Uint8Array(await (await service.api(stalled.mcap_url)).arrayBuffer());
    const reader = await McapIndexedReader.Initialize({
      decompressHandlers: (await loadMcapCompression()).decompressHandlers,
      readable: { size: async () => BigInt(bytes.byteLength), read: async (offset, size) => bytes.subarray(Number(offset), Number(offset + size)) },
    });
    const names: string[] = [];
    let endMeta: any;
    for await (const message of reader.readMessages({ topics: ["/events", "/meta"] })) {
      const body = JSON.parse(new TextDecoder().decode(message.data));
      if (reader.channelsById.get(message.channelId)!.topic === "/events") names.push(body.name);
      else if (body.phase === "end") endMeta = body;
    }
    assert.equal(names.filter((n) => n === "intervention:on_stall").length, stalled.interventions.length);
    assert.deepEqual(endMeta.interventions.map((i: any) => i.t_s), stalled.interventions.map((i: any) => i.t_s));
    assert.equal(endMeta.interventions_mode, "on_stall");
  });
});
