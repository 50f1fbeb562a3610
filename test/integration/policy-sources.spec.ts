/**
 * Policies as teams serve them, end to end on the simulated fleet (real coordinator, real cell
 * agents over gRPC, real HTTP):
 * - an ONNX checkpoint uploaded through /v1/models in resumable chunks, pinned by sha256, fetched by
 *   the cell over its link and run with onnxruntime-web for every step;
 * - a policy served in the openpi WebSocket protocol by a server this test runs
 *   (test/support/openpi-server.ts: msgpackr, not our codec), wrapping the simulated expert;
 * - the reference container images the simulated cells serve;
 * and the refusals at submission: pre-flight of an unreachable endpoint and of a wrong action
 * shape, checkpoint runtimes and references that cannot run, models that do not fit.
 */
import { freePort } from "../support/free-port.js";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials, Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { CellLinkClient } from "../../protocol/gen/cell.js";
import { README_RUN_BODY } from "../fixtures.js";
import { linearStatePolicy } from "../support/onnx-models.js";
import { startOpenpiServer, type OpenpiTestServer } from "../support/openpi-server.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, startTestService, type TestService } from "./helpers.js";

type Json = Record<string, any>;

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
/** A state-only model that holds the arm where it is: targets = current joint positions, 4 rows per inference. */
const HOLD_POSE = linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 4 });

const CONTRACTS = {
  action_space: { type: "joint_position", dim: 6 },
  observation_contract: { cameras: [], state: ["joint_positions"] },
} as const;

function checkpointPolicy(hf: string, extra: Json = {}): Json {
  return { type: "checkpoint", hf, runtime: "onnx", inference: { action_horizon: 2, chunk_size: 4 }, ...CONTRACTS, ...extra };
}


describe("policy sources: uploaded ONNX checkpoints, openpi endpoints, reference containers (simulated fleet)", function () {
  this.timeout(240_000);
  let service: TestService;
  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  const json = async (res: Response, status: number): Promise<Json> => {
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, JSON.stringify(body));
    return body;
  };
  const put = (url: string, body: Uint8Array, range?: string) =>
    service.api(new URL(url).pathname, {
      method: "PUT",
      body: Buffer.from(body),
      headers: { "content-type": "application/octet-stream", ...(range ? { "content-range": range } : {}) },
    });
  const runs = async () => ((await json(await service.api("/v1/runs?limit=100"), 200)).data as Json[]).length;

  /** Declares and uploads a model whole; returns the ready Model. */
  async function upload(name: string, bytes: Uint8Array): Promise<Json> {
    const model = await json(await service.api("/v1/models", { method: "POST", json: { name, format: "onnx", bytes: bytes.length, sha256: sha256(bytes) } }), 201);
    return json(await put(model.upload_url, bytes), 200);
  }

  it("uploads a model in resumable chunks, checks its sha256, and reads its declared inputs and outputs", async () => {
    const bytes = HOLD_POSE;
    const half = Math.floor(bytes.length / 2);
    const created = await json(await service.api("/v1/models", { method: "POST", json: { name: "acme/hold-pose", format: "onnx", bytes: bytes.length, sha256: sha256(bytes) } }), 201);
    assert.equal(created.status, "uploading");
    assert.equal(created.received_bytes, 0);
    assert.match(created.upload_url, new RegExp(`/v1/models/${created.id}/content$`));

    const first = await json(await put(created.upload_url, bytes.subarray(0, half), `bytes 0-${half - 1}/${bytes.length}`), 200);
    assert.equal(first.received_bytes, half);
    // A chunk that does not start where the upload stands says where to start.
    const wrongStart = await json(await put(created.upload_url, bytes.subarray(1), `bytes 1-${bytes.length - 1}/${bytes.length}`), 422);
    assert.match(wrongStart.error.message, new RegExp(`next chunk must start at byte ${half}, not 1`));
    // A body shorter than its range does not count (as a connection broken mid-chunk).
    const short = await json(await put(created.upload_url, bytes.subarray(half, half + 10), `bytes ${half}-${bytes.length - 1}/${bytes.length}`), 422);
    assert.match(short.error.message, /carried 10 bytes but its range announces/);
    assert.equal((await json(await service.api(`/v1/models/${created.id}`), 200)).received_bytes, half, "the upload resumes from where it stood");

    const ready = await json(await put(created.upload_url, bytes.subarray(half), `bytes ${half}-${bytes.length - 1}/${bytes.length}`), 200);
    assert.equal(ready.status, "ready");
    assert.equal(ready.upload_url, null);
    assert.deepEqual(ready.io.inputs, [{ name: "observation.state", type: "float32", shape: [1, 6] }]);
    assert.deepEqual(ready.io.outputs, [{ name: "action", type: "float32", shape: [1, 4, 6] }]);
    assert.ok(Date.parse(ready.expires_at) - Date.parse(ready.ready_at) === 90 * 24 * 3_600_000, "default retention 90d");

    const again = await json(await service.api("/v1/models", { method: "POST", json: { name: "acme/hold-pose", format: "onnx", bytes: 10, sha256: "0".repeat(64) } }), 422);
    assert.match(again.error.message, new RegExp(`already ready on this account \\(${created.id}\\)`));
    const listed = await json(await service.api("/v1/models?name=acme/hold-pose"), 200);
    assert.deepEqual(listed.data.map((m: Json) => m.id), [created.id]);
  });

  it("starts an upload over on a wrong sha256, and fails a file that is not an ONNX model", async () => {
    const bytes = HOLD_POSE;
    const wrong = await json(await service.api("/v1/models", { method: "POST", json: { name: "acme/wrong-hash", format: "onnx", bytes: bytes.length, sha256: "ab".repeat(32) } }), 201);
    const refused = await json(await put(wrong.upload_url, bytes), 422);
    assert.match(refused.error.message, new RegExp(`hash to sha256 ${sha256(bytes)}, not the declared ab`));
    const after = await json(await service.api(`/v1/models/${wrong.id}`), 200);
    assert.deepEqual([after.status, after.received_bytes], ["uploading", 0]);

    const junk = new TextEncoder().encode("this is not a model, just text that happens to be uploaded");
    const notModel = await json(await service.api("/v1/models", { method: "POST", json: { name: "acme/junk", format: "onnx", bytes: junk.length, sha256: sha256(junk) } }), 201);
    const failed = await json(await put(notModel.upload_url, junk), 422);
    assert.match(failed.error.message, /is not a usable ONNX model/);
    const row = await json(await service.api(`/v1/models/${notModel.id}`), 200);
    assert.equal(row.status, "failed");
    assert.ok(row.failure.message);
  });

  it("evaluates an uploaded ONNX checkpoint: the cells fetch it over their link and run it every step", async () => {
    const model = await upload("acme/hold-pose-eval", HOLD_POSE);
    // Two episodes: every one of them must fail holding its pose, so each runs to the task's 20 s limit;
    // nothing below depends on how many there are (n and the list are checked against the count submitted).
    const episodesRun = 2;
    const created = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: episodesRun, policy: checkpointPolicy("acme/hold-pose-eval") } }), 201);
    assert.deepEqual(created.resolved_pins.models, { "acme/hold-pose-eval": { id: model.id, sha256: model.sha256, bytes: model.bytes, source: "upload" } });
    // The bytes an unfinished run needs cannot be deleted.
    const busy = await json(await service.api(`/v1/models/${model.id}`, { method: "DELETE" }), 422);
    assert.match(busy.error.message, new RegExp(`in use by unfinished runs \\(${created.id}\\)`));

    const { run } = await runEnd(service, created.id, { deadlineMs: 180_000 });
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail ?? run));
    const episodes = (await json(await service.api(`/v1/runs/${run.id}/episodes`), 200)).data as Json[];
    assert.equal(episodes.length, episodesRun);
    // Holding its pose, the arm never lifts the cube: every episode ran to its end and failed.
    for (const episode of episodes) {
      assert.equal(episode.outcome, "failure", JSON.stringify(episode));
      assert.ok(episode.mcap_url);
    }
    assert.equal(run.result.n, episodesRun);
    assert.equal(run.result.success_rate, 0);
    assert.equal(run.result.ci95[0], 0);
    // Each cell that ran an episode holds the model once, by hash.
    const cached = (service.fleet!.status().map((s) => join(service.dataDir, "cells", s.cell, "agent", "models", `${model.sha256}.onnx`))).filter(existsSync);
    assert.ok(cached.length >= 1, "the model is in a cell's cache");

    const deleted = await json(await service.api(`/v1/models/${model.id}`, { method: "DELETE" }), 200);
    assert.equal(deleted.status, "deleted");
    const gone = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 1, policy: checkpointPolicy("acme/hold-pose-eval") } }), 422);
    assert.match(gone.error.message, /no model "acme\/hold-pose-eval" on this account/);
  });

  it("refuses checkpoint policies that cannot run, before anything is stored", async () => {
    const before = await runs();
    const model = await upload("acme/seven-dof", linearStatePolicy({ stateWidth: 6, dof: 7, chunk: 4 }));
    const cases: Array<[Json, RegExp]> = [
      [checkpointPolicy("acme/hold-pose", { runtime: "pytorch" }), /runtime "pytorch" is not supported; cells run checkpoints with: onnx/],
      [checkpointPolicy("acme/never-uploaded"), /no model "acme\/never-uploaded" on this account.*upload it first \(POST \/v1\/models/],
      [checkpointPolicy("not a name!"), /must name a model as org\/name/],
      [checkpointPolicy("acme/seven-dof"), new RegExp(`model ${model.id}\\) does not fit the policy: .*7`)],
    ];
    for (const [policy, message] of cases) {
      const refused = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 1, policy } }), 422);
      assert.equal(refused.error.code, "contract_validation_failed");
      assert.match(refused.error.message, message);
    }
    assert.equal(await runs(), before);
  });

  describe("openpi endpoints", () => {
    let server: OpenpiTestServer;
    before(async () => {
      server = await startOpenpiServer({ model: "so101", chunk: 10, rowsPerRequest: 8 });
    });
    after(async () => {
      await server?.close();
    });

    // The DROID key set (exterior and wrist images at 224x224, padded; joint and gripper positions; prompt).
    const openpiPolicy = (url: string, extra: Json = {}): Json => ({
      type: "endpoint",
      protocol: "openpi",
      url,
      latency_budget_ms: 500,
      observation_map: { preset: "droid" },
      inference: { action_horizon: 8 },
      action_space: { type: "joint_position", dim: 6 },
      observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions", "gripper_state"] },
      ...extra,
    });

    it("evaluates a policy served in the openpi protocol: msgpack observations in, action chunks out", async () => {
      const created = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 4, policy: openpiPolicy(server.url) } }), 201);
      const preflights = server.connections;
      assert.ok(preflights >= 1, "the submission pre-flighted the endpoint");
      const { run } = await runEnd(service, created.id, { deadlineMs: 180_000 });
      assert.equal(run.status, "completed", JSON.stringify(run.status_detail ?? run));
      assert.equal(run.result.n, 4);
      // The expert behind the server picks the cube up: the rate comes out of the episodes that ran.
      const successes = ((await json(await service.api(`/v1/runs/${run.id}/episodes`), 200)).data as Json[]).filter((e) => e.outcome === "success").length;
      assert.ok(successes >= 2, `${successes} of 4 episodes succeeded`);
      assert.equal(run.result.success_rate, successes / 4);
      // One WebSocket connection per episode, besides the pre-flight.
      assert.equal(server.connections - preflights, 4);
    });

    it("pre-flight refuses an unreachable endpoint and a wrong action shape, storing nothing", async () => {
      const before = await runs();
      const port = await freePort();
      const unreachable = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 1, policy: openpiPolicy(`ws://127.0.0.1:${port}/`) } }), 422);
      assert.equal(unreachable.error.code, "contract_validation_failed");
      assert.match(unreachable.error.message, new RegExp(`pre-flight of ws://127.0.0.1:${port}/ failed: .*connect`));

      const wide = await startOpenpiServer({ model: "so101", chunk: 10, actionDim: 7 });
      try {
        const wrongShape = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 1, policy: openpiPolicy(wide.url) } }), 422);
        assert.match(wrongShape.error.message, /\[10, 7\].*action_space.dim is 6/);
      } finally {
        await wide.close();
      }
      const noMap = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 1, policy: openpiPolicy(server.url, { observation_map: undefined }) } }), 422);
      assert.match(noMap.error.message, /policy.observation_map: required when policy.protocol is "openpi": give \{"preset": "droid"\}/);
      assert.equal(await runs(), before);
    });
  });

  it("evaluates the reference containers the simulated cells serve", async () => {
    const created = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 2 } }), 201);
    const { run } = await runEnd(service, created.id);
    assert.equal(run.status, "completed");
    assert.equal(run.result.n, 2);
  });
});

describe("policy models from the operator's mirror", function () {
  this.timeout(60_000);
  let service: TestService;
  let mirror: string;

  before(async () => {
    mirror = mkdtempSync(join(tmpdir(), "assay-mirror-"));
    mkdirSync(join(mirror, "lab", "hold-pose", "v2"), { recursive: true });
    writeFileSync(join(mirror, "lab", "hold-pose", "v2", "model.onnx"), HOLD_POSE);
    service = await startTestService({ modelMirror: mirror });
  });
  after(async () => {
    await service?.stop();
    rmSync(mirror, { recursive: true, force: true });
  });

  it("copies a mirrored model into the account on first use, pinned by hash, and reuses the copy; only the cells running it may fetch it", async () => {
    const api = (path: string, body?: unknown) => service.api(path, body === undefined ? {} : { method: "POST", json: body });
    const first = (await (await api("/v1/runs", { ...README_RUN_BODY, episodes: 1, policy: checkpointPolicy("lab/hold-pose@v2") })).json()) as Json;
    assert.ok(first.id, JSON.stringify(first));
    const pinned = first.resolved_pins.models["lab/hold-pose@v2"];
    assert.deepEqual({ sha256: pinned.sha256, bytes: pinned.bytes, source: pinned.source }, { sha256: sha256(HOLD_POSE), bytes: HOLD_POSE.length, source: "mirror" });
    const models = ((await (await api("/v1/models")).json()) as Json).data as Json[];
    assert.deepEqual(models.map((m) => [m.ref, m.source, m.status]), [["lab/hold-pose@v2", "mirror", "ready"]]);
    // The mirror changes; runs keep using the account's copy.
    writeFileSync(join(mirror, "lab", "hold-pose", "v2", "model.onnx"), linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 2 }));
    const second = (await (await api("/v1/runs", { ...README_RUN_BODY, episodes: 1, policy: checkpointPolicy("lab/hold-pose@v2") })).json()) as Json;
    assert.deepEqual(second.resolved_pins.models["lab/hold-pose@v2"], pinned);
    const missing = (await (await api("/v1/runs", { ...README_RUN_BODY, episodes: 1, policy: checkpointPolicy("lab/absent") })).json()) as Json;
    assert.match(missing.error.message, /no model "lab\/absent" on this account or in the operator's model mirror/);
    assert.ok(readdirSync(join(service.dataDir, "artifacts", ".models")).some((f) => f === `${pinned.id}.onnx`));

    // A cell holding no episode of a run that pinned the model does not get its bytes.
    const stranger = await service.coordinator.enrollCell("so101-x", "so101");
    const client = new CellLinkClient(service.coordinator.grpcAddress, credentials.createInsecure());
    try {
      const metadata = new Metadata();
      metadata.set("authorization", `Bearer ${stranger}`);
      const refused = await new Promise<ServiceError>((resolve, reject) => {
        const call = client.fetchModel({ modelId: pinned.id, offset: 0 }, metadata);
        call.on("data", () => reject(new Error("a cell with no episode of the run received model bytes")));
        call.on("error", resolve);
      });
      assert.equal(refused.code, status.NOT_FOUND);
      assert.match(refused.details, /not one this cell's assigned episode runs/);
    } finally {
      client.close();
    }
  });
});
