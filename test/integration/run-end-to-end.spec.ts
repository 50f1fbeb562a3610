/**
 * The foundation end to end: a real coordinator (HTTP + gRPC + SQLite file) and real cell-agent
 * processes on loopback, running the README's run to completion and reading back what a customer reads.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McapIndexedReader } from "@mcap/core";
import { loadMcapCompression } from "../../protocol/recording/mcap-compression.js";
import { betaBinomialRate } from "../../coordinator/stats/beta-binomial-rate.js";
import { theseCellsRate } from "../../coordinator/stats/these-cells-rate.js";
import { wilsonInterval } from "../../coordinator/stats/wilson.js";
import { readSse, startTestService, type TestService } from "./helpers.js";
import { README_RUN_BODY } from "../fixtures.js";
import { probeVideo, videoTrack } from "../support/mp4-video.js";

const README_RUN = README_RUN_BODY;
/**
 * Four episodes, not eight: every check below holds at any count (n, each episode's "of", the per-cell sums and
 * intervals, the failure clusters, one listing row per episode), and two cells of so101@3.11 start idle when the run
 * is queued, so the episodes still spread over both (the spread check) while so101-a (3.10) runs none.
 */
const EPISODES = 4;

describe("a run end to end on a simulated fleet", function () {
  this.timeout(240_000);
  let service: TestService;

  before(async () => {
    service = await startTestService({ cells: ["so101-a", "so101-b", "so101-c"] });
  });

  after(async () => {
    await service?.stop();
  });

  it("runs the README body to a completed result with n, the model-level ci95 and the rate on these cells, meters and MCAP per episode", async () => {
    const created = await service.api("/v1/runs", { method: "POST", json: { ...README_RUN, episodes: EPISODES }, headers: { "idempotency-key": "e2e-1" } });
    assert.equal(created.status, 201, await created.clone().text());
    const run = (await created.json()) as Record<string, any>;
    assert.equal(run.object, "run");
    assert.equal(run.status, "queued");
    assert.equal(run.resolved_pins.robot, "so101@3.11");
    assert.equal(run.resolved_pins.task, "pick-cube@v1");
    assert.match(run.resolved_pins.perturbation_rev, /^[a-z0-9-]+@\d+$/);

    const events = await service.api(`/v1/runs/${run.id}/events`);
    assert.equal(events.status, 200);
    assert.match(events.headers.get("content-type") ?? "", /text\/event-stream/);
    const seen = await readSse(events, (e) => e.event === "status" && ["completed", "failed", "stopped"].includes((e.data as any).status));
    const statuses = seen.filter((e) => e.event === "status").map((e) => (e.data as any).status);
    assert.deepEqual(statuses.at(-1), "completed", JSON.stringify(seen));
    const episodes = seen.filter((e) => e.event === "episode").map((e) => e.data as any);
    assert.equal(episodes.length, EPISODES);
    for (const e of episodes) {
      assert.equal(e.of, EPISODES);
      assert.ok(["success", "failure"].includes(e.outcome));
      assert.ok(e.duration_s > 0);
    }

    const done = (await (await service.api(`/v1/runs/${run.id}`)).json()) as Record<string, any>;
    assert.equal(done.status, "completed");
    assert.ok(done.completed);
    const result = done.result;
    assert.equal(result.n, EPISODES);
    // ci95 is the model-level interval over the cells that ran the episodes (one cell too); beside it the
    // rate on these very cells, the ICC, the prior and the headline's sentences.
    const byCell = result.cells.by_cell.map((c: any) => ({ k: c.successes, n: c.n }));
    assert.equal(byCell.reduce((sum: number, c: any) => sum + c.n, 0), EPISODES);
    assert.deepEqual(result.ci95, betaBinomialRate(byCell).ci);
    assert.equal(result.interval_method, "beta-binomial-posterior");
    assert.deepEqual(result.cells.these_cells, theseCellsRate(byCell));
    assert.deepEqual(result.cells.ci95_these_cells, result.cells.these_cells.ci95);
    if (byCell.every((c: any) => c.n === byCell[0].n)) assert.deepEqual(result.cells.ci95_these_cells, wilsonInterval(byCell.reduce((s: number, c: any) => s + c.k, 0), EPISODES));
    assert.equal(result.cells.prior.source, "default");
    assert.equal(result.cells.statement[0], `Model-level success rate (a new cell of this robot model): ${result.success_rate.toFixed(2)} `
      + `[${result.ci95[0].toFixed(2)}, ${result.ci95[1].toFixed(2)}], 95% beta-binomial posterior over ${byCell.length} cell${byCell.length === 1 ? "" : "s"}.`);
    assert.ok(result.success_rate >= 0 && result.success_rate <= 1);
    assert.equal(result.ci95.length, 2);
    assert.ok(result.ci95[0] <= result.success_rate && result.success_rate <= result.ci95[1]);
    assert.ok(result.robot_hours > 0 && result.environment_hours > 0 && result.cost_usd > 0);
    const failures = Object.values(result.failure_clusters as Record<string, number>).reduce((a, b) => a + b, 0);
    assert.equal(failures, Math.round(EPISODES * (1 - result.success_rate)));
    for (const kind of ["mcap", "video", "ground_truth", "report_pdf"]) assert.ok(result.artifacts[kind], kind);

    // The same Idempotency-Key returns the original run.
    const again = await service.api("/v1/runs", { method: "POST", json: { ...README_RUN, episodes: EPISODES }, headers: { "idempotency-key": "e2e-1" } });
    assert.equal(((await again.json()) as any).id, run.id);

    const list = (await (await service.api(`/v1/runs/${run.id}/episodes`)).json()) as Record<string, any>;
    assert.equal(list.object, "list");
    assert.equal(list.data.length, EPISODES);
    const cells = new Set<string>();
    for (const episode of list.data) {
      assert.equal(episode.object, "episode");
      assert.ok(episode.mcap_url && episode.video_url);
      assert.equal(typeof episode.replay_spec.layout_seed, "number");
      assert.equal(episode.replay_spec.environment, "tabletop@1");
      if (episode.cell) cells.add(episode.cell);
    }
    assert.ok(cells.size >= 2, `episodes spread over cells: ${[...cells]}`);
    assert.ok(!cells.has("so101-a"), "so101-a has firmware 3.10 and must not run a 3.11 pin");

    // An MCAP recording, fetched over HTTP and opened with @mcap/core's indexed reader.
    const mcap = await service.api(list.data[0].mcap_url);
    assert.equal(mcap.status, 200);
    const bytes = new Uint8Array(await mcap.arrayBuffer());
    const reader = await McapIndexedReader.Initialize({
      decompressHandlers: (await loadMcapCompression()).decompressHandlers,
      readable: { size: async () => BigInt(bytes.byteLength), read: async (offset, size) => bytes.subarray(Number(offset), Number(offset + size)) },
    });
    const topics = new Set([...reader.channelsById.values()].map((c) => c.topic));
    for (const topic of ["/joint_states_measured", "/joint_targets_commanded", "/camera/top", "/camera/wrist", "/ft_wrist", "/gt/object_poses", "/events", "/meta"]) {
      assert.ok(topics.has(topic), `MCAP lacks ${topic}; has ${[...topics]}`);
    }
    const imageSchema = [...reader.schemasById.values()].find((s) => s.name === "foxglove.CompressedImage");
    assert.ok(imageSchema, "camera channels use foxglove.CompressedImage");
    let meta: any;
    for await (const message of reader.readMessages({ topics: ["/meta"] })) {
      meta = JSON.parse(new TextDecoder().decode(message.data));
      break;
    }
    assert.equal(meta.firmware, "3.11");
    assert.ok("seed" in meta && "perturbations_realized" in meta, JSON.stringify(meta));
    assert.equal(meta.camera_clocks.top.kind, "simulation", "the recording says which clock the frames' capture times are on");
    // Both cameras capture in the same control steps, together: the simulated ones at the same world instant.
    assert.ok(topics.has("/camera_sync"), `MCAP lacks /camera_sync; has ${[...topics]}`);
    let syncs = 0;
    for await (const message of reader.readMessages({ topics: ["/camera_sync"] })) {
      const sync = JSON.parse(new TextDecoder().decode(message.data));
      assert.deepEqual(Object.keys(sync.capture_time).sort(), ["top", "wrist"]);
      assert.equal(sync.skew_ms, 0);
      syncs++;
    }
    assert.ok(syncs > 0, "a /camera_sync message for each step the cameras captured together");
    let end: any;
    for await (const message of reader.readMessages({ topics: ["/meta"] })) end = JSON.parse(new TextDecoder().decode(message.data));
    assert.equal(end.phase, "end");
    assert.deepEqual(end.camera_sync, { steps: syncs, skew_ms_max: 0, skew_ms_mean: 0 });

    const video = await service.api(list.data[0].video_url);
    assert.equal(video.status, 200);
    const mp4 = new Uint8Array(await video.arrayBuffer());
    assert.equal(new TextDecoder().decode(mp4.subarray(4, 8)), "ftyp", "video is an MP4");

    // Every camera's video, wrist included: H.264 yuv420p, moov first (browsers play it), one frame per captured frame.
    const first = list.data[0];
    assert.deepEqual(Object.keys(first.videos).sort(), ["top", "wrist"]);
    assert.equal(first.videos.top, first.video_url, "video_url is the top camera's video");
    const dir = mkdtempSync(join(tmpdir(), "e2e-videos-"));
    try {
      for (const camera of ["top", "wrist"]) {
        let captured = 0;
        for await (const message of reader.readMessages({ topics: [`/camera/${camera}`] })) if (message) captured++;
        const response = await service.api(first.videos[camera]);
        assert.equal(response.status, 200);
        assert.equal(response.headers.get("content-type"), "video/mp4");
        const path = join(dir, `${camera}.mp4`);
        writeFileSync(path, new Uint8Array(await response.arrayBuffer()));
        const probe = probeVideo(path);
        assert.deepEqual([probe.codec, probe.pixFmt], ["h264", "yuv420p"], `${camera} video`);
        assert.ok(captured > 0);
        assert.equal(probe.decodedFrames, captured, `${camera}: one decoded frame per frame the camera captured`);
        const track = videoTrack(path);
        assert.equal(track.samples, captured);
        assert.ok(track.moovFirst, `${camera} video has its moov before mdat (faststart)`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("cancels a running run on request: stopped with no error code, the episodes that ran kept, the partial result served", async () => {
    const created = (await (await service.api("/v1/runs", { method: "POST", json: { ...README_RUN, episodes: 200 } })).json()) as Record<string, any>;
    // Cancel once some episodes have finished (the `episode` events say so).
    await readSse(await service.api(`/v1/runs/${created.id}/events`), (e) => e.event === "episode");
    const cancelled = await service.api(`/v1/runs/${created.id}/cancel`, { method: "POST" });
    assert.equal(cancelled.status, 200, await cancelled.clone().text());
    const run = (await cancelled.json()) as Record<string, any>;
    assert.equal(run.status, "stopped");
    assert.equal(run.status_detail.code, null);
    assert.match(run.status_detail.message, /^cancelled on request \(key /);
    const result = await service.api(`/v1/runs/${created.id}/result`);
    assert.equal(result.status, 200);
    const partial = (await result.json()) as Record<string, any>;
    assert.ok(partial.n >= 1 && partial.n < 200, `n = ${partial.n}`);
    const again = (await (await service.api(`/v1/runs/${created.id}/cancel`, { method: "POST" })).json()) as Record<string, any>;
    assert.equal(again.error.code, "contract_validation_failed");
    assert.match(again.error.message, /already stopped/);
  });

  it("refuses a policy whose action space does not match the robot, before anything runs", async () => {
    const response = await service.api("/v1/runs", {
      method: "POST",
      json: { ...README_RUN, policy: { ...README_RUN.policy, action_space: { type: "joint_position", dim: 7 } } },
    });
    assert.equal(response.status, 422);
    const body = (await response.json()) as any;
    assert.equal(body.error.code, "contract_validation_failed");
    assert.match(body.error.message, /dim/);
    assert.match(body.error.doc_url, /errors#contract_validation_failed$/);
    const doc = await fetch(body.error.doc_url);
    assert.equal(doc.status, 200);
  });
});
