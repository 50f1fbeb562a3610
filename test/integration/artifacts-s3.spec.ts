/**
 * Artifacts in an S3-compatible bucket (ASSAY_ARTIFACTS_URL=s3://...; docs/storage.md), against
 * s3rver in this process. The bucket is read with a client of its own, not through the coordinator.
 *
 * - A run on a simulated fleet: every episode's MCAP and video land in the bucket (nothing under the
 *   data dir), a download answers 302 to a presigned URL that fetches the exact bytes, an export is
 *   an object too and downloads the same way, and a purge deletes the run's objects.
 * - Failover: a cell cut off half way through an upload on one coordinator resumes on a fresh
 *   coordinator (new data dir, so no spool; the same SQLite file and the same bucket), which answers
 *   0; the cell agent's own uploader sends the file again and it completes once, intact. A file
 *   already complete in the bucket while its row is pending (a coordinator that died between the
 *   two) is recognised as stored without being sent again.
 */
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListObjectsV2Command, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { ArtifactStore as Outbox } from "../../cell-agent/upload/artifact-store.js";
import { Uploader } from "../../cell-agent/upload/uploader.js";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { getArtifact } from "../../coordinator/store/artifacts-repo.js";
import { README_RUN_BODY } from "../fixtures.js";
import { startS3Server, type S3Server } from "../support/s3-server.js";
import { ScriptedAgent } from "../support/scripted-agent.js";
import { runEnd, startTestService, TEST_ADMIN_KEY, waitForRunEnd, type TestService } from "./helpers.js";

type Json = Record<string, any>;

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("artifacts in an S3-compatible bucket", function () {
  this.timeout(180_000);
  let s3: S3Server;
  let bucket: S3Client;
  /** The key prefix of this file's objects in the one bucket. */
  const prefix = `it-${randomBytes(4).toString("hex")}`;
  const artifactsUrl = () => `s3://${s3.bucket}/${prefix}`;
  const connection = () => ({ endpoint: s3.endpoint, region: s3.region, credentials: s3.credentials });

  /** Keys and sizes under `<prefix>/<under>`, relative to the prefix, sorted. */
  async function listed(under: string): Promise<Array<{ key: string; bytes: number }>> {
    const page = await bucket.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${prefix}/${under}` }));
    return (page.Contents ?? []).map((o) => ({ key: o.Key!.slice(prefix.length + 1), bytes: o.Size! })).sort((a, b) => a.key.localeCompare(b.key));
  }

  /** GET with the key, not following the redirect: the presigned URL, checked to be one. */
  async function presigned(api: (path: string, init?: RequestInit) => Promise<Response>, url: string, sha: string): Promise<string> {
    const res = await api(url, { redirect: "manual" });
    assert.equal(res.status, 302, await res.clone().text());
    assert.equal(res.headers.get("x-content-sha256"), sha);
    const location = res.headers.get("location")!;
    assert.ok(location.startsWith(`${s3.endpoint}/${s3.bucket}/${prefix}/`), location);
    assert.match(location, /X-Amz-Expires=300\b/);
    return location;
  }

  /** Fetches a presigned URL as a browser would: no key. */
  async function fetchBytes(url: string): Promise<Buffer> {
    const res = await fetch(url);
    assert.equal(res.status, 200, await res.clone().text());
    return Buffer.from(await res.arrayBuffer());
  }

  before(async () => {
    s3 = await startS3Server();
    bucket = new S3Client({ endpoint: s3.endpoint, region: s3.region, credentials: s3.credentials, forcePathStyle: true });
  });

  after(async () => {
    bucket?.destroy();
    await s3?.stop();
  });

  describe("a run on a simulated fleet", () => {
    let service: TestService;
    let run: Json;
    let artifacts: Json[];

    before(async () => {
      service = await startTestService({ cells: ["so101-b"], artifactsUrl: artifactsUrl(), s3: connection() });
      const created = await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 3 } });
      assert.equal(created.status, 201, await created.clone().text());
      ({ run } = await runEnd(service, ((await created.json()) as Json).id));
      assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
      artifacts = [];
      for (const kind of ["mcap", "video", "video:wrist"]) {
        artifacts.push(...((await (await service.api(`/v1/runs/${run.id}/episodes?artifact=${kind}`)).json()) as Json).data);
      }
    });

    after(async () => {
      await service?.stop();
    });

    it("stores every episode's MCAP and every camera's video in the bucket, none under the data dir, and no upload is left in the spool", async () => {
      assert.equal(artifacts.length, 9);
      const expected = artifacts.map((a) => ({ key: `${run.id}/${a.episode_id}/${new URL(a.url).pathname.split("/").pop()}`, bytes: a.bytes }));
      assert.deepEqual(await listed(`${run.id}/`), expected.sort((a, b) => a.key.localeCompare(b.key)));
      for (const a of artifacts) assert.equal(a.status, "stored");
      assert.equal(existsSync(join(service.dataDir, "artifacts")), false, "a bucket store keeps nothing under <dataDir>/artifacts");
      assert.deepEqual(readdirSync(join(service.dataDir, "artifacts-spool")), [], "every upload completed and left the spool");
    });

    it("answers a download with a 302 to a short-lived presigned URL that fetches the exact bytes", async () => {
      for (const a of artifacts) {
        const bytes = await fetchBytes(await presigned(service.api, a.url, a.sha256));
        assert.equal(bytes.length, a.bytes);
        assert.equal(sha256(bytes), a.sha256, a.url);
      }
    });

    it("puts exports in the bucket and serves them the same way; a training format reads the recordings it fetched", async () => {
      for (const format of ["mcap-bundle", "rlds"]) {
        const created = (await (await service.api(`/v1/runs/${run.id}/export`, { method: "POST", json: { format } })).json()) as Json;
        assert.equal(created.status, "preparing", JSON.stringify(created));
        await service.coordinator.archives.idle();
        const exp = (await (await service.api(`/v1/exports/${created.id}`)).json()) as Json;
        assert.equal(exp.status, "ready", JSON.stringify(exp.failure));
        assert.ok(exp.episodes.included > 0, JSON.stringify(exp.episodes));
        assert.deepEqual(await listed(`.exports/${exp.id}/`), [{ key: `.exports/${exp.id}/${exp.file.name}`, bytes: exp.file.bytes }]);
        const bytes = await fetchBytes(await presigned(service.api, exp.download_url, exp.file.sha256));
        assert.equal(sha256(bytes), exp.file.sha256);
        assert.equal(existsSync(join(service.dataDir, "exports-work", exp.id)), false, "the export's work folder is removed");
      }
    });

    it("deletes the run's objects and its exports' on purge", async () => {
      const purged = await service.api(`/v1/data/${run.id}`, { method: "DELETE" });
      assert.equal(purged.status, 200, await purged.clone().text());
      assert.deepEqual(await listed(`${run.id}/`), []);
      assert.deepEqual(await listed(".exports/"), []);
      const gone = await service.api(artifacts[0].url, { redirect: "manual" });
      assert.equal(gone.status, 410);
    });
  });

  describe("failover to a coordinator without the upload's spool", () => {
    let dirA: string;
    let dirB: string;
    let cellDir: string;
    let coordinator: RunningCoordinator | undefined;
    const agents: ScriptedAgent[] = [];

    const start = (dataDir: string) =>
      startCoordinator(compileCoordinatorOptions({ port: 0, grpcPort: 0, dataDir, apiKey: TEST_ADMIN_KEY, artifactsUrl: artifactsUrl(), s3: connection() }));
    const api = (path: string, init: RequestInit & { json?: unknown } = {}) =>
      fetch(new URL(path, coordinator!.baseUrl), {
        ...init, body: init.json === undefined ? init.body : JSON.stringify(init.json),
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, ...(init.json === undefined ? {} : { "content-type": "application/json" }) },
      });

    before(() => {
      dirA = mkdtempSync(join(tmpdir(), "assay-s3-a-"));
      dirB = mkdtempSync(join(tmpdir(), "assay-s3-b-"));
      cellDir = mkdtempSync(join(tmpdir(), "assay-s3-cell-"));
    });

    after(async () => {
      for (const agent of agents) agent.close();
      await coordinator?.stop();
      for (const dir of [dirA, dirB, cellDir]) rmSync(dir, { recursive: true, force: true });
    });

    it("restarts an interrupted upload from 0 on the new coordinator and completes it once, intact; takes a file already in the bucket as stored", async () => {
      // Coordinator A: the cell finishes an episode with an MCAP and a video and starts uploading the MCAP.
      coordinator = await start(dirA);
      const token = await coordinator.enrollCell("so101-b", "so101");
      const cell = new ScriptedAgent(coordinator.grpcAddress, token, "so101-b");
      agents.push(cell);
      await cell.connect();
      const created = (await (await api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, robot: "so101@3.11", episodes: 1 } })).json()) as Json;
      const assign = await cell.next((m) => m.assignEpisode);
      await cell.started(assign);

      // The files are in the cell agent's own outbox, as its recorder leaves them.
      const outbox = new Outbox(join(cellDir, "outbox"));
      await outbox.init();
      mkdirSync(join(cellDir, "recordings"));
      const mcapBytes = randomBytes(8 * 1024 * 1024 + 777); // over S3's 5 MiB part minimum: a multipart upload on both coordinators
      const videoBytes = randomBytes(300_000);
      writeFileSync(join(cellDir, "recordings", `${assign.episodeId}.mcap`), mcapBytes);
      writeFileSync(join(cellDir, "recordings", `${assign.episodeId}.mp4`), videoBytes);
      const mcap = await outbox.take(assign.episodeId, "mcap", join(cellDir, "recordings", `${assign.episodeId}.mcap`));
      const video = await outbox.take(assign.episodeId, "video", join(cellDir, "recordings", `${assign.episodeId}.mp4`));
      await cell.sendSequenced({
        episodeFinished: {
          episodeId: assign.episodeId, attempt: assign.attempt, outcome: "success", failureCluster: "", durationS: 20, resetS: 4,
          replaySpecJson: JSON.stringify({ environment: "tabletop@1", layout_seed: 0 }), metaJson: "{}", artifacts: [mcap.ref, video.ref],
          evaluationJson: "{}", finishedAtMs: Date.now(),
        },
      });
      outbox.announce({ ...mcap, announcedSeq: 1 });
      outbox.announce({ ...video, announcedSeq: 1 });

      // 5.5 MiB of the MCAP reach A, then A dies.
      const half = 22 * 256 * 1024;
      const chunks = [];
      for (let offset = 0; offset < half; offset += 256 * 1024) chunks.push({ ref: offset === 0 ? mcap.ref : undefined, offset, data: mcapBytes.subarray(offset, offset + 256 * 1024), last: false });
      assert.deepEqual(await cell.upload(chunks), { receivedBytes: half, complete: false });
      assert.deepEqual(await cell.artifactStatus(mcap.ref), { receivedBytes: half, complete: false });
      assert.equal(readdirSync(join(dirA, "artifacts-spool")).length, 1, "A holds the upload in its spool");
      await coordinator.stop();
      coordinator = undefined;

      // Coordinator B: a new data dir (no spool), the same SQLite file moved into it, the same bucket.
      for (const name of readdirSync(dirA).filter((n) => n.startsWith("assay.sqlite"))) renameSync(join(dirA, name), join(dirB, name));
      coordinator = await start(dirB);
      const moved = new ScriptedAgent(coordinator.grpcAddress, token, "so101-b");
      agents.push(moved);
      assert.deepEqual(await moved.artifactStatus(mcap.ref), { receivedBytes: 0, complete: false }, "B holds none of it: the cell starts again from 0");

      // The video: A completed it in the bucket but died before recording it (put here directly, with no hash metadata).
      await bucket.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${prefix}/${created.id}/${assign.episodeId}/${video.ref.fileName}`, Body: videoBytes }));
      assert.deepEqual(await moved.artifactStatus(video.ref), { receivedBytes: videoBytes.length, complete: true });
      assert.equal((await getArtifact(coordinator.db, assign.episodeId, "video"))!.status, "stored");

      // The cell agent's uploader asks B where to resume, sends the MCAP from 0, and drops its copies once B confirms them.
      const lines: string[] = [];
      const uploader = new Uploader({
        store: outbox, client: () => moved.client, metadata: () => moved.metadata(), chunkBytes: 256 * 1024,
        ackedSeq: () => 1, linkUp: () => true, onBacklog: () => undefined, log: (line) => lines.push(line),
      });
      uploader.kick();
      await uploader.idle();
      uploader.stop();
      assert.deepEqual(await outbox.list(), [], `the outbox is empty; uploader said: ${lines.join("\n")}`);
      assert.deepEqual(await moved.artifactStatus(mcap.ref), { receivedBytes: mcapBytes.length, complete: true });

      const end = await waitForRunEnd(coordinator.baseUrl, TEST_ADMIN_KEY, created.id, { deadlineMs: 60_000 });
      assert.equal(end.status, "completed");
      assert.deepEqual(await listed(`${created.id}/`), [
        { key: `${created.id}/${assign.episodeId}/${mcap.ref.fileName}`, bytes: mcapBytes.length },
        { key: `${created.id}/${assign.episodeId}/${video.ref.fileName}`, bytes: videoBytes.length },
      ].sort((a, b) => a.key.localeCompare(b.key)));
      const listedMcap = ((await (await api(`/v1/runs/${created.id}/episodes?artifact=mcap`)).json()) as Json).data[0];
      assert.equal(listedMcap.sha256, sha256(mcapBytes));
      const bytes = await fetchBytes(await presigned(api, listedMcap.url, listedMcap.sha256));
      assert.ok(bytes.equals(mcapBytes), "the MCAP in the bucket is the cell's file, byte for byte");
      assert.deepEqual(readdirSync(join(dirB, "artifacts-spool")), [], "B's upload completed and left its spool");
    });
  });
});
