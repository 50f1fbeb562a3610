/**
 * Run exports over real HTTP on a simulated fleet: POST /v1/runs/{id}/export answers 202 preparing,
 * the archive worker makes the archive, GET /v1/exports/{id} shows it ready with its size and
 * SHA-256, and the download (a tar read here by node-tar, not the tar-stream that wrote it) holds
 * what the format promises. The training formats leave out failed episodes unless the run allows
 * them; the mcap-bundle holds every episode. Purging the run expires its exports.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tar from "tar";
import { README_RUN_BODY } from "../fixtures.js";
import { eventually } from "../support/eventually.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, type TestService } from "./helpers.js";

type Json = Record<string, any>;

const NOVICE = { ...README_RUN_BODY.policy, image: "assay/ref-policy:novice" };
const PERTURBATION = { layout_jitter_mm: 10, lighting: ["nominal", "dim"], distractors: "color-blocks@1", seed: 20251122 };

describe("run exports (simulated fleet)", function () {
  this.timeout(300_000);
  let service: TestService;
  let dir: string;
  const runs: Record<string, { run: Json; episodes: Json[] }> = {};

  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  const json = async (res: Response, status: number): Promise<Json> => {
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, JSON.stringify(body));
    return body;
  };

  async function completedRun(name: string, body: Json): Promise<void> {
    const created = await json(await service.api("/v1/runs", { method: "POST", json: body }), 201);
    const { run } = await runEnd(service, created.id);
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
    const episodes = (await json(await service.api(`/v1/runs/${run.id}/episodes`), 200)).data as Json[];
    runs[name] = { run, episodes };
  }

  /** Requests an export, polls it as a client would until it leaves preparing, and returns it. */
  async function exported(runId: string, format: string): Promise<Json> {
    const created = await json(await service.api(`/v1/runs/${runId}/export`, { method: "POST", json: { format } }), 202);
    assert.equal(created.object, "export");
    assert.equal(created.status, "preparing");
    assert.equal(created.download_url, null);
    assert.equal(created.run_id, runId);
    assert.equal(created.format, format);
    const done = await eventually(`export ${created.id} to leave preparing`, async () => {
      const polled = await json(await service.api(`/v1/exports/${created.id}`), 200);
      return polled.status !== "preparing" && polled;
    }, { intervalMs: 100 });
    assert.equal(done.status, "ready", JSON.stringify(done.failure));
    return done;
  }

  /** Downloads a ready export, checks its size and SHA-256, extracts it with node-tar and returns the folder. */
  async function downloaded(exp: Json): Promise<string> {
    const res = await service.api(exp.download_url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/x-tar");
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.equal(bytes.length, exp.file.bytes);
    assert.equal(createHash("sha256").update(bytes).digest("hex"), exp.file.sha256);
    assert.equal(res.headers.get("x-content-sha256"), exp.file.sha256);
    const out = mkdtempSync(join(dir, `${exp.format}-`));
    writeFileSync(join(out, "archive.tar"), bytes);
    await tar.x({ file: join(out, "archive.tar"), cwd: out, strict: true });
    return out;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-exports-"));
    // Expert: succeeds. Novice: mostly fails; one run keeps failures for training, one does not.
    await completedRun("expert", { ...README_RUN_BODY, episodes: 3 });
    await completedRun("noviceKeep", { ...README_RUN_BODY, episodes: 4, policy: NOVICE, perturbation: PERTURBATION, data: { retention: "30d", train_on_failures: true } });
    await completedRun("noviceDrop", { ...README_RUN_BODY, episodes: 4, policy: NOVICE, perturbation: PERTURBATION });
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it("mcap-bundle: every episode's MCAP and video with their outcomes, a manifest with hashes and the report", async () => {
    const { run, episodes } = runs.noviceDrop!;
    const exp = await exported(run.id, "mcap-bundle");
    assert.deepEqual(exp.progress, { episodes_done: episodes.length, episodes_total: episodes.length });
    assert.deepEqual(exp.episodes, { included: episodes.length, excluded: {}, train_on_failures: false });
    assert.ok(Date.parse(exp.expires_at) > Date.parse(exp.ready_at));
    const out = await downloaded(exp);
    const root = join(out, `${run.id}-mcap-bundle`);
    const manifest = JSON.parse(readFileSync(join(root, "manifest.json"), "utf8"));
    assert.equal(manifest.schema, "assay.mcap_bundle/1");
    assert.equal(manifest.run_id, run.id);
    assert.deepEqual(manifest.resolved_pins, run.resolved_pins);
    assert.equal(manifest.episodes.length, episodes.length);
    for (const e of episodes) {
      const m = manifest.episodes.find((x: Json) => x.episode_id === e.id);
      assert.ok(m, `episode ${e.id} in the manifest`);
      assert.equal(m.outcome, e.outcome);
      assert.equal(m.index, e.index);
      assert.equal(m.failure_cluster, e.failure_cluster ?? null);
      assert.deepEqual(m.replay_spec, e.replay_spec);
      assert.deepEqual(m.files.map((f: Json) => f.kind).sort(), ["mcap", "video"]);
      for (const f of m.files) {
        const bytes = readFileSync(join(root, f.path));
        assert.equal(bytes.length, f.bytes);
        assert.equal(createHash("sha256").update(bytes).digest("hex"), f.sha256);
      }
      // The same bytes the episode's own URLs serve.
      const mcap = m.files.find((f: Json) => f.kind === "mcap");
      const served = Buffer.from(await (await service.api(e.mcap_url)).arrayBuffer());
      assert.ok(served.equals(readFileSync(join(root, mcap.path))));
    }
    const sums = readFileSync(join(root, "SHA256SUMS"), "utf8").trim().split("\n");
    assert.equal(sums.length, episodes.length * 2);
    const report = JSON.parse(readFileSync(join(root, "report.json"), "utf8"));
    assert.equal(report.object, "report");
    assert.equal(report.run_id, run.id);
    assert.deepEqual(report.result.n, run.result.n);

    // Listed on the run; a Range request resumes a download.
    const listed = await json(await service.api(`/v1/runs/${run.id}/exports`), 200);
    assert.ok(listed.data.some((x: Json) => x.id === exp.id));
    const partial = await service.api(exp.download_url, { headers: { range: "bytes=0-511" } });
    assert.equal(partial.status, 206);
    assert.equal((await partial.arrayBuffer()).byteLength, 512);
  });

  it("training formats leave out failed episodes unless the run allows them, and say so", async () => {
    const drop = runs.noviceDrop!;
    const succeeded = drop.episodes.filter((e) => e.outcome === "success" && !e.intervened).length;
    const failed = drop.episodes.filter((e) => e.outcome === "failure").length;
    if (succeeded === 0) {
      const refused = await json(await service.api(`/v1/runs/${drop.run.id}/export`, { method: "POST", json: { format: "lerobot" } }), 422);
      assert.equal(refused.error.code, "contract_validation_failed");
      assert.match(refused.error.message, /train_on_failures/);
    } else {
      const exp = await exported(drop.run.id, "lerobot");
      assert.deepEqual(exp.episodes, { included: succeeded, excluded: failed > 0 ? { failure: failed } : {}, train_on_failures: false });
    }
    const keep = runs.noviceKeep!;
    const exp = await exported(keep.run.id, "rlds");
    assert.deepEqual(exp.episodes, { included: keep.episodes.length, excluded: {}, train_on_failures: true });
  });

  it("refuses what cannot be exported with the spec's codes and plain messages", async () => {
    const { run } = runs.expert!;
    const bad = await json(await service.api(`/v1/runs/${run.id}/export`, { method: "POST", json: { format: "hdf5" } }), 422);
    assert.equal(bad.error.code, "contract_validation_failed");
    assert.match(bad.error.message, /lerobot, rlds, mcap-bundle/);
    const missing = await json(await service.api(`/v1/runs/${run.id}/export`, { method: "POST", json: {} }), 422);
    assert.equal(missing.error.code, "contract_validation_failed");
    assert.equal((await json(await service.api("/v1/runs/run_nope/export", { method: "POST", json: { format: "rlds" } }), 404)).error.code, "not_found");
    assert.equal((await json(await service.api("/v1/exports/exp_nope"), 404)).error.code, "not_found");
    // A run still queued (so101@3.10 is installed only on so101-a, not in this fleet) cannot be exported yet.
    const open = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, robot: "so101@3.10", episodes: 1 } }), 201);
    const early = await json(await service.api(`/v1/runs/${open.id}/export`, { method: "POST", json: { format: "mcap-bundle" } }), 422);
    assert.equal(early.error.code, "contract_validation_failed");
    assert.match(early.error.message, /only a completed run can be exported/);
    service.coordinator.halt(open.id, "queue_timeout", "test cleanup: the run was only needed while queued");
  });

  it("a purge deletes the run's exports: their downloads and new exports answer 410 retention_expired", async () => {
    const { run } = runs.expert!;
    const exp = await exported(run.id, "mcap-bundle");
    const receipt = await json(await service.api(`/v1/data/${run.id}`, { method: "DELETE" }), 200);
    assert.equal(receipt.object, "purge_receipt");
    const after = await json(await service.api(`/v1/exports/${exp.id}`), 200);
    assert.equal(after.status, "expired");
    assert.equal(after.download_url, null);
    assert.equal(after.failure.reason, "purged");
    assert.equal((await json(await service.api(exp.download_url), 410)).error.code, "retention_expired");
    assert.deepEqual(readdirSync(join(service.dataDir, "artifacts", ".exports")).filter((id) => id === exp.id), []);
    const again = await json(await service.api(`/v1/runs/${run.id}/export`, { method: "POST", json: { format: "lerobot" } }), 410);
    assert.equal(again.error.code, "retention_expired");
  });
});
