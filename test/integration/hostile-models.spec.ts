/**
 * Hostile model uploads (issue 24, rows 1, 8 and 9), on a real coordinator over HTTP with small
 * model bounds (coordinator option `models`): the shape bomb sent in three Content-Range chunks is
 * refused by the bounded reader while other requests keep being answered; declarations past the
 * file size, the account's quota or its uploads in progress are refused before any byte is sent;
 * models whose declared inputs the robot and its cameras could never fill are refused at submission.
 * Every refusal is the spec's envelope naming what to fix.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { README_RUN_BODY } from "../fixtures.js";
import { cameraStatePolicy, linearStatePolicy, shapeBombModel } from "../support/onnx-models.js";
import { testStoreOptions } from "../support/test-database.js";
import { TEST_ADMIN_KEY } from "./helpers.js";

type Json = Record<string, any>;

const MiB = 1024 ** 2;
const LIMITS = { maxBytes: 8 * MiB, maxChunkBytes: 4 * MiB, accountQuotaBytes: 12 * MiB, maxPendingUploads: 2 };
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("hostile model uploads: bounded reader, size, quota and input bounds", function () {
  this.timeout(60_000);
  let coordinator: RunningCoordinator;
  let dataDir: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "assay-hostile-models-"));
    coordinator = await startCoordinator(compileCoordinatorOptions({
      port: 0, grpcPort: 0, dataDir, apiKey: TEST_ADMIN_KEY, ...(await testStoreOptions(dataDir)), models: LIMITS,
      // The probe asks one request after another for as long as an upload lasts.
      rateLimits: { general: { perS: 100_000, burst: 100_000 }, submit: { perS: 100_000, burst: 100_000 } },
    }));
  });
  after(async () => {
    await coordinator?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const api = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${TEST_ADMIN_KEY}`);
    if (init.json !== undefined) headers.set("content-type", "application/json");
    return fetch(new URL(path, coordinator.baseUrl), { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
  };
  const json = async (res: Response, status: number): Promise<Json> => {
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, JSON.stringify(body).slice(0, 2000));
    return body;
  };
  /** A 422 in the spec's envelope; returns its message. */
  const refused = async (res: Response): Promise<string> => {
    const body = await json(res, 422);
    assert.deepEqual(Object.keys(body.error).sort(), ["code", "doc_url", "message"]);
    assert.equal(body.error.code, "contract_validation_failed");
    return body.error.message as string;
  };
  const declare = (name: string, bytes: number, hash = "0".repeat(64)) => api("/v1/models", { method: "POST", json: { name, format: "onnx", bytes, sha256: hash } });
  const put = (id: string, body: Uint8Array, range: string) =>
    api(`/v1/models/${id}/content`, { method: "PUT", body: Buffer.from(body), headers: { "content-type": "application/octet-stream", "content-range": range } });
  /** Uploads `bytes` in `parts` Content-Range chunks; returns the last answer. */
  async function uploadInChunks(id: string, bytes: Uint8Array, parts: number): Promise<Response> {
    const size = Math.ceil(bytes.length / parts);
    let last: Response | undefined;
    for (let first = 0; first < bytes.length; first += size) {
      const end = Math.min(first + size, bytes.length);
      last = await put(id, bytes.subarray(first, end), `bytes ${first}-${end - 1}/${bytes.length}`);
      if (end < bytes.length) await json(last, 200);
    }
    return last!;
  }
  /** Uploads a model whole and returns it ready. */
  async function ready(name: string, bytes: Uint8Array): Promise<Json> {
    const model = await json(await declare(name, bytes.length, sha256(bytes)), 201);
    return json(await uploadInChunks(model.id, bytes, 1), 200);
  }
  /** Runs `work` while probing GET /v1/robots one request after another; returns the slowest probe in ms. */
  async function slowestProbeDuring(work: Promise<unknown>): Promise<{ slowestMs: number; probes: number }> {
    let done = false;
    const finished = work.finally(() => (done = true));
    let slowestMs = 0;
    let probes = 0;
    while (!done && probes < 5000) {
      const started = performance.now();
      assert.equal((await api("/v1/robots")).status, 200);
      slowestMs = Math.max(slowestMs, performance.now() - started);
      probes++;
    }
    await finished;
    return { slowestMs, probes };
  }

  it("refuses the shape bomb sent in three Content-Range chunks, answering other requests within 200 ms throughout", async () => {
    // 1,000,000 declared dimensions (4 MB): the structure of the 192 MB upload, a fiftieth of its size.
    const bomb = shapeBombModel(1_000_000);
    const model = await json(await declare("mallory/shape-bomb", bomb.length, sha256(bomb)), 201);
    let last: Response | undefined;
    const { slowestMs, probes } = await slowestProbeDuring(uploadInChunks(model.id, bomb, 3).then((res) => (last = res)));
    const message = await refused(last!);
    assert.equal(
      message,
      `model ${model.id} is not a usable ONNX model: the model declares more than Assay accepts: the model's input observation.images.top declares more than 8 dimensions ([1, 1, 1, 1, 1, 1, 1, 1, ...]); at most 8 are accepted`,
    );
    assert.ok(probes > 0);
    assert.ok(slowestMs < 200, `GET /v1/robots took ${slowestMs.toFixed(0)} ms during the upload`);
    const failed = await api(`/v1/models/${model.id}`);
    const text = await failed.text();
    assert.equal(failed.status, 200);
    assert.ok(text.length < 2000, `the failed model's answer is short (${text.length} characters)`);
    assert.equal(JSON.parse(text).status, "failed");
  });

  it("joins a model sent in chunks, hashing on the way, and shows its declared io", async () => {
    const bytes = cameraStatePolicy({ stateWidth: 6, dof: 6, chunk: 4, camera: "top", height: 96, width: 128 });
    const model = await json(await declare("acme/chunked", bytes.length, sha256(bytes)), 201);
    const done = await json(await uploadInChunks(model.id, bytes, 3), 200);
    assert.equal(done.status, "ready");
    assert.deepEqual(done.io.inputs, [
      { name: "observation.state", type: "float32", shape: [1, 6] },
      { name: "observation.images.top", type: "float32", shape: [1, 3, 96, 128] },
    ]);
    await json(await api(`/v1/models/${model.id}`, { method: "DELETE" }), 200);
  });

  it("refuses a declaration above the largest file, past the account's quota, or beyond its uploads in progress", async () => {
    assert.equal(await refused(await declare("mallory/too-big", 9 * MiB)), `bytes: models up to ${8 * MiB} bytes (8 MiB) are accepted; got ${9 * MiB}. Export a smaller model (fp16 weights, fewer layers)`);
    const a = await json(await declare("mallory/a", 6 * MiB), 201);
    const b = await json(await declare("mallory/b", 6 * MiB), 201);
    assert.match(await refused(await declare("mallory/c", 1)), /^this account has 2 model uploads in progress, the most it may have at once \(2\); finish or delete one/);
    await json(await api(`/v1/models/${b.id}`, { method: "DELETE" }), 200);
    const quota = await refused(await declare("mallory/c", 7 * MiB));
    assert.match(quota, new RegExp(`^bytes: this account holds ${6 * MiB} bytes of models \\(6 MiB, uploads in progress included\\) of its ${12 * MiB} \\(12 MiB\\); ${7 * MiB} more would exceed it`));
    await json(await api(`/v1/models/${a.id}`, { method: "DELETE" }), 200);
    // Freed: the same declaration now fits.
    const c = await json(await declare("mallory/c", 7 * MiB), 201);
    await json(await api(`/v1/models/${c.id}`, { method: "DELETE" }), 200);
  });

  it("refuses, at submission, models whose inputs the robot and cameras could never fill, naming the input and its shape", async () => {
    const submit = (hf: string, cameras: string[]) => api("/v1/runs", {
      method: "POST",
      json: {
        ...README_RUN_BODY, episodes: 2,
        policy: { type: "checkpoint", hf, runtime: "onnx", action_space: { type: "joint_position", dim: 6 }, observation_contract: { cameras, state: ["joint_positions"] } },
      },
    });
    const image = await ready("mallory/huge-image", cameraStatePolicy({ stateWidth: 6, dof: 6, chunk: 4, camera: "top", height: 4000, width: 4000 }));
    assert.match(await refused(await submit(image.id, ["top"])), /the model's input observation\.images\.top declares \[1, 3, 4000, 4000\], 4000x4000 pixels; camera top gives 640x480 frames, and an image input may be at most 2 times that \(1280x960\)/);
    const noise = await ready("mallory/huge-noise", linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 4, extraInputs: [{ name: "noise", dims: [1, 40, 1_000_000] }] }));
    assert.match(await refused(await submit(noise.id, [])), /the model's input noise declares \[1, 40, 1000000\], 40000000 values; a noise input may have at most 65536/);
    // A 20000x20000 image input is past the reader's bound on elements: refused at upload already.
    const bytes = cameraStatePolicy({ stateWidth: 6, dof: 6, chunk: 4, camera: "top", height: 20_000, width: 20_000 });
    const declared = await json(await declare("mallory/huger-image", bytes.length, sha256(bytes)), 201);
    assert.match(await refused(await uploadInChunks(declared.id, bytes, 1)), /the model's input observation\.images\.top declares the shape \[1, 3, 20000, 20000\], 1200000000 elements; at most 134217728 are accepted/);
  });
});
