/**
 * Recordings that do not come, against a real coordinator (in this process, on ASSAY_TEST_DATABASE's engine) and the
 * cell agent's own outbox and uploader (cell-agent/upload/) over real gRPC. The cell's episode is reported by a
 * ScriptedAgent (it replaces the cell's hardware and runner, so the test decides when the cell dies).
 *
 * - The uploader behind a TCP path that stops forwarding without closing: the pass ends at the stall deadline (and
 *   the next one at the ArtifactStatus deadline) instead of hanging, and once the path recovers the upload continues
 *   from the coordinator's offset and the run completes.
 * - A cell that dies after its last episode: the run waits, shown (status_detail, /metrics, the download's error);
 *   a coordinator restarted with a wait that is over completes it from the sweep, the recordings recorded missing;
 *   the cell comes back, uploads them late, and they are stored and served.
 */
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials } from "@grpc/grpc-js";
import { ArtifactStore as Outbox, type QueuedArtifact } from "../../cell-agent/upload/artifact-store.js";
import { Uploader } from "../../cell-agent/upload/uploader.js";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { getArtifact } from "../../coordinator/store/artifacts-repo.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { CellLinkClient, type AssignEpisode } from "../../protocol/gen/cell.js";
import { README_RUN_BODY } from "../fixtures.js";
import { button, ConsoleTab } from "../support/console-tab.js";
import { eventually } from "../support/eventually.js";
import { ScriptedAgent } from "../support/scripted-agent.js";
import { startStallingTcpProxy, type StallingTcpProxy } from "../support/stalling-tcp-proxy.js";
import { openBrowserTabs } from "../support/shared-browser.js";
import { runEnd, startTestService, TEST_ADMIN_KEY, type TestService } from "./helpers.js";

type Json = Record<string, any>;

const HOUR_MS = 3_600_000;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** A cell's outbox in `dir`, as the agent's recorder leaves it: files taken in, announced with seq 1. */
async function outboxWith(dir: string, files: Array<{ episodeId: string; kind: "mcap" | "video"; bytes: Buffer }>): Promise<{ outbox: Outbox; queued: Array<Omit<QueuedArtifact, "announcedSeq">> }> {
  const outbox = new Outbox(join(dir, "outbox"));
  await outbox.init();
  mkdirSync(join(dir, "recordings"), { recursive: true });
  const queued: Array<Omit<QueuedArtifact, "announcedSeq">> = [];
  for (const file of files) {
    const source = join(dir, "recordings", `${file.episodeId}.${file.kind === "mcap" ? "mcap" : "mp4"}`);
    writeFileSync(source, file.bytes);
    queued.push(await outbox.take(file.episodeId, file.kind, source));
  }
  return { outbox, queued };
}

/** The cell reports its episode finished with these recordings; the outbox then holds them as announced. */
async function finishWith(cell: ScriptedAgent, assign: AssignEpisode, outbox: Outbox, queued: ReadonlyArray<Omit<QueuedArtifact, "announcedSeq">>): Promise<void> {
  await cell.started(assign);
  await cell.sendSequenced({
    episodeFinished: {
      episodeId: assign.episodeId, attempt: assign.attempt, outcome: "success", failureCluster: "", durationS: 20, resetS: 4,
      replaySpecJson: JSON.stringify({ environment: "tabletop@1", layout_seed: 0 }), metaJson: "{}", artifacts: queued.map((q) => q.ref),
      evaluationJson: "{}", finishedAtMs: Date.now(),
    },
  });
  for (const q of queued) outbox.announce({ ...q, announcedSeq: 1 });
}

/** One sample of a /metrics series (labels as written), or undefined when the series has no such sample. */
async function metric(service: TestService, series: string): Promise<number | undefined> {
  const text = await (await fetch(new URL("/metrics", service.coordinator.baseUrl))).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("recordings that do not come", function () {
  this.timeout(180_000);
  const cleanups: Array<() => Promise<void> | void> = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A coordinator, a scripted so101-b connected to it with a cell folder of its own, and a 1-episode run submitted. */
  async function serviceWithRun(options: Parameters<typeof startTestService>[0], dirPrefix: string) {
    const service = await startTestService(options);
    cleanups.push(() => service.stop());
    const cellDir = mkdtempSync(join(tmpdir(), dirPrefix));
    cleanups.push(() => rmSync(cellDir, { recursive: true, force: true }));
    const token = await service.coordinator.enrollCell("so101-b", "so101");
    const cell = new ScriptedAgent(service.coordinator.grpcAddress, token, "so101-b");
    cleanups.push(() => cell.close());
    await cell.connect();
    const created = (await (await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, robot: "so101@3.11", episodes: 1 } })).json()) as Json;
    return { service, cellDir, cell, created };
  }

  it("an upload over a path that stops forwarding ends at its deadlines, and continues from the coordinator's offset once the path recovers", async () => {
    const { service, cellDir, cell, created } = await serviceWithRun({}, "assay-stall-cell-");
    const assign = await cell.next((m) => m.assignEpisode);
    const mcapBytes = randomBytes(12 * 1024 * 1024 + 5);
    const { outbox, queued } = await outboxWith(cellDir, [{ episodeId: assign.episodeId, kind: "mcap", bytes: mcapBytes }]);
    await finishWith(cell, assign, outbox, queued);

    // The cell's uploads go through a path that forwards 2 MiB and then nothing, without closing. (Under the 4 MiB the
    // coordinator gathers before it records a part: what it got is recorded in one part once the cancel reaches it.)
    const proxy: StallingTcpProxy = await startStallingTcpProxy(service.coordinator.grpcAddress);
    cleanups.push(() => proxy.close());
    proxy.stallAfter(2 * 1024 * 1024);
    const client = new CellLinkClient(proxy.address, credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 });
    cleanups.push(() => client.close());
    const lines: string[] = [];
    const uploader = new Uploader({
      store: outbox, client: () => client, metadata: () => cell.metadata(), chunkBytes: 256 * 1024, ackedSeq: () => 1, linkUp: () => true,
      onBacklog: () => undefined, log: (line) => lines.push(line),
      // Short deadlines, though not so short that a healthy stream on a loaded machine pauses that long before the
      // path stalls (the second pass would then find the path still open); the retry timer is kept out of the way,
      // each pass is kicked here.
      stallMs: 2_000, statusTimeoutMs: 2_000, retry: { initialMs: HOUR_MS, maxMs: HOUR_MS },
    });
    cleanups.push(() => uploader.stop());

    uploader.kick();
    await uploader.idle();
    assert.match(lines.at(-1)!, /^upload of .*\.mcap stopped \(no progress for 2\.0 s at byte \d+ of 12582917 .*cancelled\); will resume from the coordinator's offset/, lines.join("\n"));
    // The next pass asks where to resume over the same silent path: the ArtifactStatus deadline ends it.
    uploader.kick();
    await uploader.idle();
    assert.match(lines.at(-1)!, /^upload of .*\.mcap stopped \(4 DEADLINE_EXCEEDED: /, lines.join("\n"));
    assert.equal((await outbox.list()).length, 1, "still queued");
    assert.equal((await getArtifact(service.coordinator.db, assign.episodeId, "mcap"))!.status, "pending");

    // The path recovers: what it held reaches the coordinator, then the first call's cancel, on which it records
    // the bytes it received (one part).
    proxy.resume();
    const recorded = await eventually("the coordinator to record the first stream's bytes", async () => {
      const progress = await cell.artifactStatus(queued[0]!.ref);
      return progress.receivedBytes > 0 && progress.receivedBytes;
    }, { deadlineMs: 60_000 });
    // The recovered path is the cell's usual one: its uploads run with the default deadlines (30 s, 60 s). The 2 s
    // ones above only make the stalls quick to see; on a loaded machine a healthy stream or the coordinator's
    // check of the whole file after the last chunk can pause that long, and this part is about the resume.
    uploader.stop();
    const recovered = new Uploader({
      store: outbox, client: () => client, metadata: () => cell.metadata(), chunkBytes: 256 * 1024, ackedSeq: () => 1, linkUp: () => true,
      onBacklog: () => undefined, log: (line) => lines.push(line), retry: { initialMs: HOUR_MS, maxMs: HOUR_MS },
    });
    cleanups.push(() => recovered.stop());
    recovered.kick();
    await recovered.idle();
    assert.deepEqual(await outbox.list(), [], `uploaded; the uploader said: ${lines.join("\n")}`);
    assert.equal(await metric(service, "assay_artifact_bytes_received_total"), mcapBytes.length, `no byte sent twice: the upload continued at ${recorded}`);
    const end = await runEnd(service, created.id, { deadlineMs: 60_000 });
    assert.equal(end.status, "completed");
    const listed = ((await (await service.api(`/v1/runs/${created.id}/episodes?artifact=mcap`)).json()) as Json).data[0];
    assert.equal(listed.sha256, sha256(mcapBytes));
    assert.ok(Buffer.from(await (await service.api(listed.url)).arrayBuffer()).equals(mcapBytes), "the stored file is the cell's, byte for byte");
  });

  it("a cell that dies after its last episode: the run waits, shown, completes without the recordings once the wait is over, and takes them when the cell comes back", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "assay-recording-wait-"));
    const cellDir = mkdtempSync(join(tmpdir(), "assay-recording-wait-cell-"));
    cleanups.push(() => {
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(cellDir, { recursive: true, force: true });
    });
    // Coordinator A waits an hour: the wait is there to be seen.
    let service = await startTestService({ keepDataDir: dataDir, recordingWaitMs: HOUR_MS, runCompletionSweepMs: 100 });
    let stopped = false;
    cleanups.push(async () => {
      if (!stopped) await service.stop();
    });
    const token = await service.coordinator.enrollCell("so101-b", "so101");
    const cell = new ScriptedAgent(service.coordinator.grpcAddress, token, "so101-b");
    await cell.connect();
    const created = (await (await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, robot: "so101@3.11", episodes: 1 } })).json()) as Json;
    const assign = await cell.next((m) => m.assignEpisode);
    const mcapBytes = randomBytes(300_000);
    const videoBytes = randomBytes(100_000);
    const { outbox, queued } = await outboxWith(cellDir, [
      { episodeId: assign.episodeId, kind: "mcap", bytes: mcapBytes }, { episodeId: assign.episodeId, kind: "video", bytes: videoBytes },
    ]);
    await finishWith(cell, assign, outbox, queued);
    // The cell's PC dies before it uploads anything.
    cell.close();

    const episode = ((await (await service.api(`/v1/runs/${created.id}/episodes`)).json()) as Json).data[0];
    const finishedAt = await eventually("the episode's finish", async () => {
      const row = await service.coordinator.db.prepare("SELECT finished_at FROM episodes WHERE id = ?").get(assign.episodeId) as { finished_at: string | null };
      return row.finished_at ?? undefined;
    });
    const waiting = await eventually("the run shown waiting for its recordings", async () => {
      const run = (await (await service.api(`/v1/runs/${created.id}`)).json()) as Json;
      return run.status_detail ? run : undefined;
    });
    assert.equal(waiting.status, "running", "the spec's status while it waits");
    assert.equal(waiting.status_detail.code, null);
    assert.equal(waiting.status_detail.waiting_for, "recordings");
    assert.equal(waiting.status_detail.message,
      `every episode finished; waiting for 2 recordings from cell so101-b (pending since ${finishedAt}) not uploaded yet. ` +
      `The run completes without them at ${new Date(Date.parse(finishedAt) + HOUR_MS).toISOString()}; ` +
      "to get them, start the cell's agent or restore its link or disk (it uploads on reconnecting)");
    assert.equal(await metric(service, "assay_runs_waiting_for_recordings"), 1);
    assert.equal(await metric(service, 'assay_recordings_awaited{cell="so101-b"}'), 2);
    // GET /v1/cells is the fleet operator's (a keys:admin key of the operator account).
    const cellOf = async (id: string) => {
      const operator = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin"], new Date())).secret;
      const listed = await service.api("/v1/cells", { headers: { authorization: `Bearer ${operator}` } });
      assert.equal(listed.status, 200);
      return (((await listed.json()) as Json).data as Json[]).find((c) => c.id === id)!;
    };
    assert.deepEqual((await cellOf("so101-b")).recordings_not_uploaded, { artifacts: 2, since: finishedAt }, "the fleet view names what the cell holds");
    // The episode's download URL, on whichever coordinator answers.
    const mcapPath = new URL(episode.mcap_url as string).pathname;
    const early = await service.api(mcapPath);
    assert.equal(early.status, 404);
    const earlyError = ((await early.json()) as Json).error;
    assert.equal(earlyError.code, "not_found");
    assert.match(earlyError.message, new RegExp(`^${assign.episodeId}\\.mcap of episode ${assign.episodeId} is not uploaded yet: cell so101-b announced it when the episode finished at ${finishedAt.replace(/\./g, "\\.")} and is still to upload it\\. Try again later`));

    // Coordinator B on the same store, whose wait (1 ms) is over: its sweep completes the run, crash-safe across the restart.
    await service.stop();
    stopped = true;
    service = await startTestService({ keepDataDir: dataDir, recordingWaitMs: 1, runCompletionSweepMs: 100 });
    stopped = false;
    const end = await runEnd(service, created.id, { deadlineMs: 60_000 });
    assert.equal(end.status, "completed");
    const run = (await (await service.api(`/v1/runs/${created.id}`)).json()) as Json;
    assert.equal(run.result.n, 1, "the outcome counts without its files");
    assert.equal(run.status_detail, undefined);
    const listed = ((await (await service.api(`/v1/runs/${created.id}/episodes?artifact=mcap`)).json()) as Json).data[0];
    assert.equal(listed.status, "pending");
    assert.equal(listed.url, null);
    assert.match(listed.missing_since, /^\d{4}-\d\d-\d\dT/);
    const late = await service.api(mcapPath);
    assert.equal(late.status, 404);
    const lateError = ((await late.json()) as Json).error;
    assert.equal(lateError.code, "not_found");
    assert.equal(lateError.message,
      `${assign.episodeId}.mcap of episode ${assign.episodeId} was never uploaded: cell so101-b announced it when the episode finished at ${finishedAt} ` +
      `and had not uploaded it when the run completed without it at ${listed.missing_since} (recorded missing). If the cell's disk still holds it, ` +
      "start the cell's agent (or restore its link): it uploads the file on reconnecting, and this URL serves it from then on");
    await eventually("the missing recordings' gauge", async () => (await metric(service, 'assay_recordings_missing{cell="so101-b"}')) === 2);
    assert.equal(await metric(service, "assay_runs_waiting_for_recordings"), 0);

    // The cell comes back (same token, same outbox) and its uploader sends both files late: stored and served.
    const back = new ScriptedAgent(service.coordinator.grpcAddress, token, "so101-b");
    cleanups.push(() => back.close());
    const lines: string[] = [];
    const uploader = new Uploader({
      store: outbox, client: () => back.client, metadata: () => back.metadata(), chunkBytes: 64 * 1024, ackedSeq: () => 1, linkUp: () => true,
      onBacklog: () => undefined, log: (line) => lines.push(line),
    });
    cleanups.push(() => uploader.stop());
    uploader.kick();
    await uploader.idle();
    assert.deepEqual(await outbox.list(), [], `uploaded; the uploader said: ${lines.join("\n")}`);
    const stored = ((await (await service.api(`/v1/runs/${created.id}/episodes?artifact=mcap`)).json()) as Json).data[0];
    assert.equal(stored.status, "stored");
    assert.equal(stored.missing_since, undefined);
    const served = await service.api(new URL(stored.url as string).pathname);
    assert.equal(served.status, 200);
    assert.ok(Buffer.from(await served.arrayBuffer()).equals(mcapBytes), "the late MCAP is served, byte for byte");
    assert.equal((await getArtifact(service.coordinator.db, assign.episodeId, "video"))!.status, "stored");
    await eventually("the missing recordings' gauge to clear", async () => (await metric(service, 'assay_recordings_missing{cell="so101-b"}')) === undefined);
    assert.equal((await cellOf("so101-b")).recordings_not_uploaded, undefined);
    assert.equal(((await (await service.api(`/v1/runs/${created.id}`)).json()) as Json).status, "completed", "the run stays completed");
  });
  it("the account's admin stops the wait: the run completes now without the recordings; nobody else can, and no other run", async () => {
    const { service, cellDir, cell, created } = await serviceWithRun({ recordingWaitMs: HOUR_MS, runCompletionSweepMs: 100 }, "assay-stop-wait-cell-");
    const path = `/v1/runs/${created.id}/complete-without-recordings`;
    const error = async (res: Response, status: number) => {
      assert.equal(res.status, status);
      return ((await res.json()) as Json).error as { code: string; message: string };
    };
    const early = await error(await service.api(path, { method: "POST" }), 422);
    assert.equal(early.code, "contract_validation_failed");
    assert.match(early.message, /^run \S+ (is queued|is scheduling|still has episodes to run); only a running run whose episodes have all finished and that waits for recordings can complete without them$/);

    const assign = await cell.next((m) => m.assignEpisode);
    const { outbox, queued } = await outboxWith(cellDir, [{ episodeId: assign.episodeId, kind: "mcap", bytes: randomBytes(1000) }]);
    await finishWith(cell, assign, outbox, queued);
    await eventually("the run shown waiting for its recordings", async () =>
      ((await (await service.api(`/v1/runs/${created.id}`)).json()) as Json).status_detail);

    const writer = (await (await service.api("/v1/keys", { method: "POST", json: { scope: ["runs:read", "runs:write"] } })).json()) as Json;
    const forbidden = await error(await service.api(path, { method: "POST", headers: { authorization: `Bearer ${writer.secret}` } }), 403);
    assert.equal(forbidden.code, "insufficient_scope");

    // A person does it from the console's run page: a key without keys:admin is not offered the button; the
    // account's admin reads what the run waits for, clicks, confirms, and sees the run complete.
    const tabs = await openBrowserTabs();
    cleanups.push(() => tabs.close());
    const writerTab = await ConsoleTab.open(tabs, service.coordinator.baseUrl, () => [TEST_ADMIN_KEY, writer.secret]);
    // The scripted cell has no cameras: the run page's look for the cell's live view gets 404.
    const noLiveView = (t: ConsoleTab) => t.expectFailedLoad(/^\/v1\/streams\/so101-b$/, 404);
    noLiveView(writerTab);
    await writerTab.signIn(writer.secret);
    await writerTab.goto(`/runs/${created.id}`);
    await writerTab.waitForText("The run is waiting.");
    assert.equal(await writerTab.page.$(button("Complete without the missing recordings")), null, "offered to a key without keys:admin");
    writerTab.assertClean();
    const tab = await ConsoleTab.open(tabs, service.coordinator.baseUrl, () => [TEST_ADMIN_KEY, writer.secret]);
    noLiveView(tab);
    await tab.signIn(TEST_ADMIN_KEY);
    await tab.goto(`/runs/${created.id}`);
    await tab.waitForText("The run is waiting.");
    await tab.waitForText("1 recording from cell so101-b");
    await tab.page.click(button("Complete without the missing recordings"));
    await tab.page.keyboard.press("Enter");
    await tab.page.waitForFunction(() => document.querySelector(".page-head .badge")?.textContent === "completed", { timeout: 30_000 });
    tab.assertClean();
    const run = (await (await service.api(`/v1/runs/${created.id}`)).json()) as Json;
    assert.equal(run.status, "completed");
    assert.equal(run.result.n, 1);
    const listed = ((await (await service.api(`/v1/runs/${created.id}/episodes?artifact=mcap`)).json()) as Json).data[0];
    assert.ok(Date.parse(listed.missing_since) <= Date.parse(run.completed), `recorded missing as the run completed: ${listed.missing_since}, ${run.completed}`);
    const again = await error(await service.api(path, { method: "POST" }), 422);
    assert.match(again.message, /^run \S+ is completed; only a running run/);
  });
});
