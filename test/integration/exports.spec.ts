/**
 * Run exports over real HTTP on a simulated fleet: POST /v1/runs/{id}/export answers 202 preparing,
 * the archive worker makes the archive, GET /v1/exports/{id} shows it ready with its size and
 * SHA-256, and the download (a tar read here by node-tar, not the tar-stream that wrote it) holds
 * what the format promises. The training formats leave out failed episodes unless the run allows
 * them; the mcap-bundle holds every episode. Purging the run expires its exports.
 */
import assert from "node:assert/strict";
import { createHash, createPublicKey, verify } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import * as tar from "tar";
import { README_RUN_BODY } from "../fixtures.js";
import { eventually } from "../support/eventually.js";
import { probeVideo } from "../support/mp4-video.js";
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
    // With train_on_failures, every episode goes in, in each training format, marked with its outcome.
    const keep = runs.noviceKeep!;
    const rlds = await exported(keep.run.id, "rlds");
    assert.deepEqual(rlds.episodes, { included: keep.episodes.length, excluded: {}, train_on_failures: true });
    const rldsDir = join(await downloaded(rlds), "assay_run", "1.0.0");
    const info = JSON.parse(readFileSync(join(rldsDir, "dataset_info.json"), "utf8"));
    assert.equal(info.splits[0].shardLengths.reduce((sum: number, n: string) => sum + Number(n), 0), keep.episodes.length);
    // The shards (written as parts the archive joins) are in the download under their TFDS names, and nothing else is.
    assert.deepEqual(readdirSync(rldsDir).sort(), ["assay_run-train.tfrecord-00000-of-00001", "dataset_info.json", "features.json", "metadata.json"]);
    assert.match(readFileSync(join(rldsDir, "metadata.json"), "utf8"), new RegExp(keep.run.id));

    const lerobot = await exported(keep.run.id, "lerobot");
    assert.deepEqual(lerobot.episodes, { included: keep.episodes.length, excluded: {}, train_on_failures: true });
    const root = join(await downloaded(lerobot), `${keep.run.id}_lerobot`);
    const meta = JSON.parse(readFileSync(join(root, "meta", "info.json"), "utf8"));
    assert.equal(meta.codebase_version, "v3.0");
    assert.equal(meta.fps, 30); // the control rate of every run (CONTROL_RATE_HZ)
    assert.equal(meta.robot_type, "so101");
    assert.equal(meta.total_episodes, keep.episodes.length);
    assert.deepEqual(Object.keys(meta.features).filter((k) => k.startsWith("observation.images.")).sort(), ["observation.images.top", "observation.images.wrist"]);
    assert.equal(meta.assay.run_id, keep.run.id);
    for (const camera of ["top", "wrist"]) assert.ok(readdirSync(join(root, "videos", `observation.images.${camera}`, "chunk-000")).includes("file-000.mp4"));
    // Both cameras run at the control rate, so every episode's video is the cell's own, copied; the files decode to
    // one frame per data row of their episodes, and each episode's from/to timestamps span its frames.
    const duck = await DuckDBInstance.create(":memory:");
    const db = await duck.connect();
    try {
      const table = (await db.runAndReadAll(`select * from '${root}/meta/episodes/*/*.parquet' order by episode_index`)).getRowObjectsJS() as Json[];
      assert.equal(table.length, keep.episodes.length);
      for (const camera of ["top", "wrist"]) {
        const key = `observation.images.${camera}`;
        assert.deepEqual(meta.assay.videos[key], { copied_episodes: keep.episodes.length, encoded_episodes: 0, encoded_because: {} });
        assert.deepEqual([meta.features[key].info["video.g"], meta.features[key].info["video.preset"]], [60, "ultrafast"], "the cell's encoder settings");
        const byFile = new Map<string, Json[]>();
        for (const ep of table) {
          const file = join(root, "videos", key, `chunk-${String(ep[`videos/${key}/chunk_index`]).padStart(3, "0")}`, `file-${String(ep[`videos/${key}/file_index`]).padStart(3, "0")}.mp4`);
          byFile.set(file, [...(byFile.get(file) ?? []), ep]);
        }
        for (const [file, episodes] of byFile) {
          const probe = probeVideo(file);
          assert.deepEqual([probe.codec, probe.pixFmt], ["h264", "yuv420p"]);
          assert.equal(probe.decodedFrames, episodes.reduce((sum, ep) => sum + Number(ep.length), 0), `${file} decodes to one frame per data row`);
          let offset = 0;
          for (const ep of episodes) {
            assert.equal(ep[`videos/${key}/from_timestamp`], offset / 30);
            offset += Number(ep.length);
            assert.equal(ep[`videos/${key}/to_timestamp`], offset / 30);
          }
        }
      }
    } finally {
      db.closeSync();
    }
    assert.ok(readdirSync(join(root, "data", "chunk-000")).includes("file-000.parquet"));
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
    await service.coordinator.halt(open.id, "queue_timeout", "test cleanup: the run was only needed while queued");
  });

  it("calibration exports: scope calibration:export, plain refusals, and a signed license over every file", async () => {
    const { run, episodes } = runs.expert!;
    const body = { runs: [run.id], licensee: { name: "SimCo Robotics GmbH", contact: "validation@simco.example" }, purpose: "validate the SO-101 contact model against pick-cube", simulator: "SimCo 4.2" };
    const keyed = async (scope: string[]) => (await json(await service.api("/v1/keys", { method: "POST", json: { scope } }), 201)).secret as string;
    const reader = await keyed(["runs:read"]);
    const denied = await json(await service.api("/v1/calibration/exports", { method: "POST", json: body, headers: { authorization: `Bearer ${reader}` } }), 403);
    assert.equal(denied.error.code, "insufficient_scope");
    const vendorDesk = await keyed(["calibration:export"]);
    const as = (init: RequestInit & { json?: unknown } = {}) => ({ ...init, headers: { authorization: `Bearer ${vendorDesk}` } });
    const refused = async (payload: Json, status: number, pattern: RegExp) => {
      const error = (await json(await service.api("/v1/calibration/exports", as({ method: "POST", json: payload })), status)).error;
      assert.match(error.message, pattern);
      return error.code;
    };
    assert.equal(await refused({ ...body, runs: [] }, 422, /runs must be a list of 1\.\.20/), "contract_validation_failed");
    assert.equal(await refused({ ...body, runs: [run.id, run.id] }, 422, /named twice/), "contract_validation_failed");
    assert.equal(await refused({ ...body, licensee: undefined }, 422, /licensee/), "contract_validation_failed");
    assert.equal(await refused({ ...body, licensee: { name: "X", contact: "not-an-email" } }, 422, /email/), "contract_validation_failed");
    assert.equal(await refused({ ...body, purpose: "x" }, 422, /purpose/), "contract_validation_failed");
    assert.equal(await refused({ ...body, runs: ["run_nope"] }, 404, /run_nope/), "not_found");

    const created = await json(await service.api("/v1/calibration/exports", as({ method: "POST", json: body })), 202);
    assert.equal(created.object, "calibration_export");
    assert.equal(created.status, "preparing");
    assert.equal(created.license.licensee.name, "SimCo Robotics GmbH");
    assert.equal(created.license.use, "validation only");
    const ready = await eventually("the calibration export to leave preparing", async () => {
      const polled = await json(await service.api(`/v1/calibration/exports/${created.id}`, as()), 200);
      return polled.status !== "preparing" && polled;
    }, { intervalMs: 100 });
    assert.equal(ready.status, "ready", JSON.stringify(ready.failure));
    assert.equal(ready.episodes, episodes.length);
    const res = await service.api(ready.download_url, as());
    assert.equal(res.status, 200);
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.equal(createHash("sha256").update(bytes).digest("hex"), ready.file.sha256);
    const out = mkdtempSync(join(dir, "calibration-"));
    writeFileSync(join(out, "c.tar"), bytes);
    await tar.x({ file: join(out, "c.tar"), cwd: out, strict: true });
    const root = join(out, `calibration-${created.id}`);

    // license.sig verifies license.json's exact bytes with the service key published at /v1/signing-keys.
    const licenseBytes = readFileSync(join(root, "license.json"));
    const signature = readFileSync(join(root, "license.sig"), "utf8").trim();
    assert.equal(signature, ready.signature);
    const [, keyId, sig] = signature.split(":");
    const key = await json(await service.api(`/v1/signing-keys/${keyId}`), 200);
    assert.equal(key.owner, "service");
    assert.equal(ready.signing_key_url, `${service.coordinator.baseUrl}/v1/signing-keys/${keyId}`);
    const publicKey = createPublicKey(key.public_key_pem);
    assert.equal(verify(null, licenseBytes, publicKey, Buffer.from(sig!, "base64url")), true);
    const tampered = Buffer.from(licenseBytes);
    tampered[tampered.indexOf("SimCo")] = "Z".charCodeAt(0);
    assert.equal(verify(null, tampered, publicKey, Buffer.from(sig!, "base64url")), false);

    const license = JSON.parse(licenseBytes.toString("utf8"));
    assert.deepEqual(license.license, ready.license);
    assert.match(license.license.text, /Licensee: SimCo Robotics GmbH \(validation@simco\.example\)/);
    assert.equal(readFileSync(join(root, "LICENSE.txt"), "utf8"), license.license.text);
    assert.equal(license.files.length, 1 + episodes.length);
    for (const f of license.files) {
      const file = readFileSync(join(root, f.path));
      assert.equal(file.length, f.bytes);
      assert.equal(createHash("sha256").update(file).digest("hex"), f.sha256, f.path);
    }
    // Per episode: mocap poses, commanded vs executed joints, cameras, robot and firmware, perturbations.
    for (const e of episodes) {
      const f = license.files.find((x: Json) => x.path.endsWith(`-${e.id}.json`));
      assert.ok(f, `episode ${e.id} shipped`);
      const record = JSON.parse(readFileSync(join(root, f.path), "utf8"));
      assert.equal(record.schema, "assay.calibration_episode/1");
      assert.equal(record.run_id, run.id);
      assert.equal(record.robot.pin, run.resolved_pins.robot);
      assert.equal(`${record.robot.model}@${record.robot.firmware_recorded}`, run.resolved_pins.robot);
      assert.equal(typeof record.robot.calibration_age_s, "number");
      assert.ok(record.mocap.objects.cube.position_m.length > 10);
      for (const q of record.mocap.objects.cube.orientation_xyzw) assert.ok(Math.abs(Math.hypot(...q) - 1) < 1e-6);
      assert.equal(record.joints.commanded_rad.length, record.joints.measured_rad.length);
      assert.equal(record.joints.names.length, 6);
      assert.equal(record.cameras.top.model, "orthographic");
      assert.equal(record.cameras.wrist.model, "pinhole");
      assert.ok(Math.abs(record.cameras.wrist.fx - 160 / Math.tan(Math.PI / 6)) < 1e-9);
      assert.equal(record.perturbations_realized.perturbation_rev, run.resolved_pins.perturbation_rev);
    }
    const listed = await json(await service.api("/v1/calibration/exports", as()), 200);
    assert.ok(listed.data.some((x: Json) => x.id === created.id));
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
    // The calibration export holding the run's data goes with it.
    const calibration = (await json(await service.api("/v1/calibration/exports"), 200)).data.find((x: Json) => x.runs.includes(run.id));
    assert.equal(calibration.status, "expired");
    assert.equal(calibration.failure.reason, "purged");
  });
});
