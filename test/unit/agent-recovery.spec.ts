/**
 * Crash recovery: an attempt whose EpisodeFinished is already in the outbox (pending or acked) is
 * not also reported interrupted; a running attempt is, once; artifacts announced for a message that
 * never entered the outbox are set aside.
 */
import { strict as assert } from "node:assert";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Outbox } from "../../cell-agent/link/outbox.js";
import { recoverAfterCrash, writeRunningMarker } from "../../cell-agent/recovery.js";
import { ArtifactStore } from "../../cell-agent/upload/artifact-store.js";

const finished = (episodeId: string, attempt: number) => ({
  episodeFinished: {
    episodeId, attempt, outcome: "success", failureCluster: "", durationS: 3, resetS: 1, replaySpecJson: "{}", metaJson: "{}",
    artifacts: [{ episodeId, kind: "mcap", fileName: `${episodeId}.mcap`, bytes: 4, sha256: "x" }], evaluationJson: "{}", finishedAtMs: 1,
  },
});

describe("agent crash recovery", () => {
  let dataDir: string;
  let recordings: string;
  let store: ArtifactStore;
  let lines: string[];
  const log = (line: string) => lines.push(line);

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "agent-recovery-"));
    recordings = join(dataDir, "recordings");
    mkdirSync(recordings);
    store = new ArtifactStore(join(dataDir, "outbox"));
    await store.init();
    lines = [];
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  /** What `report` leaves behind when the kill lands after EpisodeFinished was enqueued (seq `seq`). */
  async function finishedBeforeKill(outbox: Outbox, episodeId: string, attempt: number): Promise<number> {
    writeRunningMarker(dataDir, { episode_id: episodeId, attempt, started_at_ms: 1 });
    outbox.enqueue({ episodeStarted: { episodeId, attempt, startedAtMs: 1 } });
    writeFileSync(join(recordings, `${episodeId}.mcap`), "mcap");
    const taken = await store.take(episodeId, "mcap", join(recordings, `${episodeId}.mcap`));
    const seq = outbox.nextSeqToAssign;
    store.announce({ ...taken, announcedSeq: seq });
    outbox.enqueue(finished(episodeId, attempt));
    return seq;
  }

  it("does not report interrupted an attempt whose EpisodeFinished waits in the outbox, and clears the stale marker", async () => {
    const before = Outbox.open(dataDir);
    await finishedBeforeKill(before, "ep-1", 2);
    before.close();

    const outbox = Outbox.open(dataDir);
    assert.equal(await recoverAfterCrash(dataDir, recordings, outbox, log, store), undefined);
    assert.deepEqual(outbox.unacked().map((m) => (m.episodeFinished ? "finished" : m.episodeStarted ? "started" : "other")), ["started", "finished"]);
    assert.equal(existsSync(join(dataDir, "current-episode.json")), false);
    assert.match(lines.join("\n"), /episode ep-1 \(attempt 2\) had finished before the agent stopped .*not reporting it interrupted/);
    assert.equal((await store.list()).length, 1, "its recording stays queued for upload");
    // A second start finds nothing to do.
    assert.equal(await recoverAfterCrash(dataDir, recordings, outbox, log, store), undefined);
    assert.equal(outbox.unacked().length, 2);
    outbox.close();
  });

  it("does not report interrupted an attempt whose EpisodeFinished was already acked", async () => {
    const before = Outbox.open(dataDir);
    const seq = await finishedBeforeKill(before, "ep-1", 1);
    before.ack(seq);
    before.close();

    const outbox = Outbox.open(dataDir);
    assert.equal(await recoverAfterCrash(dataDir, recordings, outbox, log, store), undefined);
    assert.deepEqual(outbox.unacked(), []);
    assert.equal(existsSync(join(dataDir, "current-episode.json")), false);
    outbox.close();
  });

  it("reports a running attempt interrupted (agent_restart) once, even with an earlier attempt's finish around", async () => {
    const outbox = Outbox.open(dataDir);
    outbox.enqueue(finished("ep-0", 1));
    writeRunningMarker(dataDir, { episode_id: "ep-1", attempt: 3, started_at_ms: 1 });
    writeFileSync(join(recordings, "ep-1.mcap.part"), "partial");
    assert.equal(await recoverAfterCrash(dataDir, recordings, outbox, log, store), "ep-1");
    const interrupted = outbox.unacked().filter((m) => m.episodeInterrupted).map((m) => m.episodeInterrupted!);
    assert.deepEqual(interrupted.map((i) => [i.episodeId, i.attempt, i.reason]), [["ep-1", 3, "agent_restart"]]);
    assert.ok(readdirSync(recordings).includes("ep-1.mcap.interrupted"));
    outbox.close();
  });

  it("sets aside artifacts announced for an EpisodeFinished that never entered the outbox", async () => {
    const before = Outbox.open(dataDir);
    writeRunningMarker(dataDir, { episode_id: "ep-1", attempt: 1, started_at_ms: 1 });
    before.enqueue({ episodeStarted: { episodeId: "ep-1", attempt: 1, startedAtMs: 1 } });
    writeFileSync(join(recordings, "ep-1.mcap"), "mcap");
    store.announce({ ...(await store.take("ep-1", "mcap", join(recordings, "ep-1.mcap"))), announcedSeq: before.nextSeqToAssign });
    before.close(); // killed before the enqueue

    const outbox = Outbox.open(dataDir);
    assert.equal(await recoverAfterCrash(dataDir, recordings, outbox, log, store), "ep-1");
    assert.deepEqual(outbox.unacked().map((m) => m.episodeInterrupted?.reason ?? "started"), ["started", "agent_restart"]);
    assert.deepEqual(await store.list(), []);
    assert.deepEqual(readdirSync(join(dataDir, "rejected")).sort(), ["ep-1.mcap", "ep-1.mcap.json"]);
    assert.match(lines.join("\n"), /ep-1\.mcap \(episode ep-1\) was never reported to the coordinator/);
    outbox.close();
  });
});
