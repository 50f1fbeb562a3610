/**
 * Replay on a simulated fleet: an episode's replay_spec, sent back through
 * POST /v1/runs/{run_id}/episodes/{episode_id}/replay, reproduces its initial conditions exactly
 * (replay_spec and /meta's realized object poses) and, with the same policy and seed, its outcome.
 */
import assert from "node:assert/strict";
import { McapIndexedReader } from "@mcap/core";
import { loadMcapCompression } from "../../protocol/recording/mcap-compression.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, type TestService } from "./helpers.js";
import { README_RUN_BODY } from "../fixtures.js";

async function episodesOf(service: TestService, runId: string): Promise<Array<Record<string, any>>> {
  return ((await (await service.api(`/v1/runs/${runId}/episodes`)).json()) as { data: Array<Record<string, any>> }).data;
}

/** The first message of a topic of the episode's MCAP, parsed as JSON. */
async function firstMessage(service: TestService, mcapUrl: string, topic: string): Promise<any> {
  const bytes = new Uint8Array(await (await service.api(mcapUrl)).arrayBuffer());
  const reader = await McapIndexedReader.Initialize({
    decompressHandlers: (await loadMcapCompression()).decompressHandlers,
    readable: { size: async () => BigInt(bytes.byteLength), read: async (offset, size) => bytes.subarray(Number(offset), Number(offset + size)) },
  });
  for await (const message of reader.readMessages({ topics: [topic] })) return JSON.parse(new TextDecoder().decode(message.data));
  return undefined;
}

describe("episode replay on a simulated fleet", function () {
  this.timeout(240_000);
  let service: TestService;

  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  it("replays an episode with the same initial conditions and the same outcome", async () => {
    // The novice in clutter fails often: a failure, with its failure cluster, is the telling thing to replay. Two
    // episodes, not four: the first of this seed is already a failure (the episodes are deterministic for their seeds).
    const body = {
      ...README_RUN_BODY, episodes: 2, policy: { ...README_RUN_BODY.policy, image: "assay/ref-policy:novice" },
      perturbation: { layout_jitter_mm: 10, lighting: ["nominal", "dim", "bright", "warm"], distractors: "office-clutter@1", seed: 777 },
    };
    const created = await service.api("/v1/runs", { method: "POST", json: body });
    assert.equal(created.status, 201, await created.clone().text());
    const { run: original } = await runEnd(service, ((await created.json()) as any).id, { deadlineMs: 150_000 });
    assert.equal(original.status, "completed");
    const episodes = await episodesOf(service, original.id);
    const chosen = episodes.find((e) => e.outcome === "failure") ?? episodes[0];

    const replayed = await service.api(`/v1/runs/${original.id}/episodes/${chosen.id}/replay`, { method: "POST", json: { count: 2 } });
    assert.equal(replayed.status, 201, await replayed.clone().text());
    const replayRun = (await replayed.json()) as Record<string, any>;
    assert.equal(replayRun.kind, "run");
    assert.equal(replayRun.resolved_pins.robot, original.resolved_pins.robot);
    assert.deepEqual(replayRun.policy, original.policy, "the default policy is the original's");
    const { run: done } = await runEnd(service, replayRun.id, { deadlineMs: 150_000 });
    assert.equal(done.status, "completed");

    const originalMeta = await firstMessage(service, chosen.mcap_url, "/meta");
    for (const copy of await episodesOf(service, replayRun.id)) {
      assert.deepEqual(copy.replay_spec, chosen.replay_spec, "the replay carries the original replay_spec");
      const meta = await firstMessage(service, copy.mcap_url, "/meta");
      assert.equal(meta.perturbations_realized.replayed, true);
      assert.deepEqual(
        Object.fromEntries(Object.entries(meta.perturbations_realized.objects as Record<string, any>).map(([k, v]) => [k, v.realized])),
        Object.fromEntries(Object.entries(originalMeta.perturbations_realized.objects as Record<string, any>).map(([k, v]) => [k, v.realized])),
        "initial object poses in /meta",
      );
      assert.deepEqual(meta.perturbations_realized.distractors, originalMeta.perturbations_realized.distractors);
      assert.equal(meta.perturbations_realized.lighting, originalMeta.perturbations_realized.lighting);
      assert.equal(copy.outcome, chosen.outcome, `replay of ${chosen.id} (${chosen.outcome}) ended ${copy.outcome}`);
      assert.equal(copy.failure_cluster, chosen.failure_cluster);
    }
    console.log(`      replayed ${chosen.id}: ${chosen.outcome} (${chosen.failure_cluster ?? "no failure cluster"}) twice, on cells ${(await episodesOf(service, replayRun.id)).map((e) => e.cell).join(", ")}`);
  });

  it("refuses to replay an episode of another run and an unknown episode", async () => {
    const response = await service.api(`/v1/runs/run_nope/episodes/ep_nope_0/replay`, { method: "POST", json: {} });
    assert.equal(response.status, 404);
    const bad = await service.api(`/v1/runs/run_nope/episodes/ep_nope_0/replay`, { method: "POST", json: { count: 0 } });
    assert.equal(bad.status, 404, "the run is looked up first");
  });
});
