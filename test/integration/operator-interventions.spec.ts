/**
 * Interventions performed by a person (issue 26 item 5) on a real simulated cell in operator mode: a
 * run with `interventions: "on_stall"` and the novice policy, which misses its cube and then holds
 * still. When the cell's stall detector fires, the episode pauses and the cell asks the station for
 * help (attention "intervene"); the test plays the person through the API the station's buttons call
 * (Intervene, then Done, with the refusals a stale screen gets), then the simulated operator helps
 * with the rest unattended. The episodes record each help with `by: "operator"` and its timestamps,
 * on the episode, in the result and on the recording's /events. Then a `scripted` run: the cell asks
 * at its time (4 s) and the simulated operator performs it.
 */
import assert from "node:assert/strict";
import { McapIndexedReader } from "@mcap/core";
import { loadMcapCompression } from "../../protocol/recording/mcap-compression.js";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { SimOperator } from "../../simulators/fleet/sim-operator.js";
import { README_RUN_BODY } from "../fixtures.js";
import { runEnd, startTestService, type TestService } from "./helpers.js";
import { stationClient } from "../support/station-client.js";

const CELL = "so101-b";
type Json = Record<string, any>;
/** As interventions.spec.ts: dim light and look-alike blocks make the novice miss and stall. */
const PERTURBATION = { layout_jitter_mm: 10, lighting: ["nominal", "dim"], distractors: "color-blocks@1", seed: 20251122 };

describe("operator interventions: a person helps a stalled episode on a simulated cell in operator mode", function () {
  this.timeout(240_000);
  let service: TestService;
  let operatorKey: string;
  let operator: SimOperator | undefined;
  const { asOperator, cell, until } = stationClient(() => service, () => operatorKey, CELL);
  const answer = async (path: string, body: unknown, status: number): Promise<Json> => {
    const response = await asOperator(path, { method: "POST", json: body });
    const json = (await response.json()) as Json;
    assert.equal(response.status, status, JSON.stringify(json));
    return json;
  };
  const simOperator = (interventions: boolean) => new SimOperator({
    baseUrl: service.coordinator.baseUrl, apiKey: operatorKey, seed: 11, delayMs: { min: 10, max: 40 }, errorRate: 0, interventions,
    setSceneWrong: (cellId) => service.fleet!.misplaceNextScene(cellId),
  });

  before(async () => {
    service = await startTestService({ cells: [CELL], simEngine: "kinematic", simResets: "operator" });
    operatorKey = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin", "runs:read", "streams:read"], new Date())).secret;
  });

  after(async () => {
    await operator?.stop();
    await service?.stop();
  });

  it("pauses the stalled episode for the person, holds while they help, goes on after Done and records it", async () => {
    // Nothing to intervene in yet: 409 with the spec's envelope.
    await until("the cell online", (c) => c.connected);
    const idle = await answer(`/v1/cells/${CELL}/intervene`, {}, 409);
    assert.equal(idle.error.code, "contract_validation_failed");
    assert.match(idle.error.message, /asks no help with an episode now .*nothing to intervene in/);

    // Resets are confirmed by the simulated operator; the first intervention is left to the test.
    operator = simOperator(false);
    operator.start();
    const body = {
      ...README_RUN_BODY, episodes: 3, perturbation: PERTURBATION, interventions: "on_stall",
      policy: { ...README_RUN_BODY.policy, image: "assay/ref-policy:novice" },
    };
    const created = await service.api("/v1/runs", { method: "POST", json: body });
    assert.equal(created.status, 201, await created.clone().text());
    const runId = ((await created.json()) as Json).id as string;
    const ended = runEnd(service, runId);

    // The stall: the cell asks for a person, says what to do, and the policy is paused.
    const asked = await until("a stalled episode asking for help", (c) => c.attention?.kind === "intervene");
    const episodeId = asked.attention.episode_id as string;
    assert.equal(asked.attention.run_id, runId);
    assert.equal(asked.attention.scene.intervention, "on_stall");
    assert.equal(asked.attention.scene.phase, "offered");
    assert.match(asked.attention.scene.what, /The policy stalled: nothing moved for 5 s/);
    assert.ok(asked.attention.scene.steps.some((s: string) => /cube \(cube\) to x \d+ mm/.test(s)), JSON.stringify(asked.attention.scene.steps));
    assert.ok(asked.attention.scene.t_s >= 5, JSON.stringify(asked.attention.scene));
    assert.equal(asked.state, "intervening", "paused for the person");

    // A customer's key may not steer the station; a stale screen and a Done before Intervene are refused (409), naming what to do.
    const customer = await service.api(`/v1/cells/${CELL}/intervene`, { method: "POST", json: { episode_id: episodeId } });
    assert.equal(customer.status, 403, await customer.clone().text());
    const stale = await answer(`/v1/cells/${CELL}/intervene`, { episode_id: "ep_not_this_one" }, 409);
    assert.match(stale.error.message, /asks help with episode .*, not "ep_not_this_one"; reload the station/);
    const early = await answer(`/v1/cells/${CELL}/intervene-done`, { episode_id: episodeId }, 409);
    assert.match(early.error.message, /nobody has pressed Intervene .* press Intervene \(POST \/v1\/cells\/\{cell_id\}\/intervene\) first/);
    const bad = await answer(`/v1/cells/${CELL}/intervene-done`, { note: 7 }, 422);
    assert.match(bad.error.message, /note must be a string of at most 500 characters/);

    // Intervene: the cell holds the arm while the person helps.
    assert.deepEqual(await answer(`/v1/cells/${CELL}/intervene`, { episode_id: episodeId }, 200),
      { object: "operator_answer", cell_id: CELL, episode_id: episodeId, action: "intervene" });
    const holding = await until("the arm held for the person", (c) => c.attention?.scene?.phase === "holding");
    assert.equal(holding.state, "intervening");
    assert.equal(holding.attention.since, asked.attention.since, "the same wait, not a new one");
    const twice = await answer(`/v1/cells/${CELL}/intervene`, {}, 409);
    assert.match(twice.error.message, /already helping .* press Done/);

    // Done: the episode goes on.
    assert.deepEqual(await answer(`/v1/cells/${CELL}/intervene-done`, { episode_id: episodeId, note: "slid the cube back" }, 200),
      { object: "operator_answer", cell_id: CELL, episode_id: episodeId, action: "intervene_done" });
    await until("the episode going on", (c) => c.attention?.kind !== "intervene" || c.attention.since !== asked.attention.since);

    // The rest of the run unattended: the simulated operator also helps with later stalls.
    await operator.stop();
    operator = simOperator(true);
    operator.start();
    const { run } = await ended;
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));

    const episodes = ((await (await service.api(`/v1/runs/${runId}/episodes`)).json()) as { data: Json[] }).data;
    const helped = episodes.find((e) => e.id === episodeId)!;
    assert.equal(helped.intervened, true);
    const first = helped.interventions[0];
    assert.equal(first.kind, "on_stall");
    assert.equal(first.by, "operator");
    assert.equal(first.offered_t_s, asked.attention.scene.t_s);
    assert.ok(first.t_s >= first.offered_t_s && first.end_t_s > first.t_s, JSON.stringify(first));
    assert.ok(first.waited_s > 0, JSON.stringify(first));
    assert.ok(Date.parse(first.ended_at) > Date.parse(first.started_at), JSON.stringify(first));
    assert.match(first.detail, /a person helped at the operator station: slid the cube back; the simulated world: re-homed the arm/);
    for (const e of episodes.filter((x) => x.intervened)) assert.ok(e.interventions.every((i: Json) => i.by === "operator"), JSON.stringify(e.interventions));

    const result = (await (await service.api(`/v1/runs/${runId}/result`)).json()) as Json;
    assert.equal(result.n, 3);
    assert.ok(result.interventions.timestamps.some((t: Json) => t.episode === episodeId && t.by === "operator"), JSON.stringify(result.interventions));
    assert.equal(result.interventions.count, episodes.reduce((sum, e) => sum + (e.interventions?.length ?? 0), 0));
    assert.equal(result.success_rate, episodes.filter((e) => e.outcome === "success" && !e.intervened).length / 3, "a helped episode is a failure of the policy");

    // The report's operator_time counts each help as the person's time, from the offer to Done (the walk over included).
    const report = await service.api(`/v1/runs/${runId}/report`);
    assert.equal(report.status, 200, await report.clone().text());
    const operatorTime = ((await report.json()) as Json).operator_time;
    const helps = episodes.flatMap((e) => (e.interventions ?? []) as Json[]);
    const personS = helps.map((i) => i.waited_s + (Date.parse(i.ended_at) - Date.parse(i.started_at)) / 1000);
    assert.equal(operatorTime.intervention.count, helps.length, JSON.stringify(operatorTime));
    assert.ok(operatorTime.intervention.s_total > 0, JSON.stringify(operatorTime));
    const metaS = personS.reduce((a, b) => a + b, 0);
    // The report rounds to 0.1 s: at most half a step (0.05 s) from the sum, which in floating point can be 0.05000000000000004.
    assert.ok(Math.abs(operatorTime.intervention.s_total - metaS) <= 0.05 + 1e-9, `report ${operatorTime.intervention.s_total} s, the episodes' meta ${metaS} s`);
    assert.ok(operatorTime.intervention.s_total >= first.waited_s, "the person's walk to the cell counts");
    assert.equal(operatorTime.episodes, 3);
    assert.ok(Math.abs(operatorTime.intervention.s_per_episode - operatorTime.intervention.s_total / 3) <= 0.1, JSON.stringify(operatorTime));
    assert.ok(Math.abs(operatorTime.s_total - (operatorTime.reset.s_total + operatorTime.label.s_total + operatorTime.intervention.s_total)) <= 0.2, JSON.stringify(operatorTime));

    // The recording has the help on /events and in the end /meta.
    const bytes = new Uint8Array(await (await service.api(helped.mcap_url)).arrayBuffer());
    const reader = await McapIndexedReader.Initialize({
      decompressHandlers: (await loadMcapCompression()).decompressHandlers,
      readable: { size: async () => BigInt(bytes.byteLength), read: async (offset, size) => bytes.subarray(Number(offset), Number(offset + size)) },
    });
    const names: string[] = [];
    let endMeta: Json | undefined;
    for await (const message of reader.readMessages({ topics: ["/events", "/meta"] })) {
      const decoded = JSON.parse(new TextDecoder().decode(message.data));
      if (reader.channelsById.get(message.channelId)!.topic === "/events") names.push(decoded.name);
      else if (decoded.phase === "end") endMeta = decoded;
    }
    assert.equal(names.filter((n) => n === "intervention:on_stall").length, helped.interventions.length);
    assert.equal(endMeta?.interventions[0].by, "operator");
    const after = await cell();
    assert.notEqual(after.state, "intervening");
    assert.equal(after.attention, null);
  });

  it("walks the person through the scripted intervention at its time; the simulated operator performs it", async () => {
    // The operator of the first test (helping) is still running; it answers this run's resets and its intervention.
    // The novice misses this scene (as in the first test), so the episode is still running at the scripted time.
    const body = { ...README_RUN_BODY, episodes: 1, perturbation: PERTURBATION, interventions: "scripted", policy: { ...README_RUN_BODY.policy, image: "assay/ref-policy:novice" } };
    const created = await service.api("/v1/runs", { method: "POST", json: body });
    assert.equal(created.status, 201, await created.clone().text());
    const runId = ((await created.json()) as Json).id as string;
    const asked = await until("the scripted intervention", (c) => c.attention?.kind === "intervene" && c.attention.run_id === runId);
    assert.equal(asked.attention.scene.intervention, "scripted");
    assert.equal(asked.attention.scene.t_s >= 4 && asked.attention.scene.t_s < 4.2, true, JSON.stringify(asked.attention.scene));
    assert.match(asked.attention.scene.what, /Scripted intervention/);
    const { run } = await runEnd(service, runId);
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
    const [episode] = ((await (await service.api(`/v1/runs/${runId}/episodes`)).json()) as { data: Json[] }).data;
    assert.equal(episode.intervened, true);
    assert.deepEqual(episode.interventions.map((i: Json) => [i.kind, i.by]), [["scripted", "operator"]]);
    assert.equal(episode.interventions[0].offered_t_s, asked.attention.scene.t_s);
    assert.match(episode.interventions[0].detail, /a person helped at the operator station: simulated operator/);
    assert.ok(operator!.tally.intervened >= 1);
  });
});
