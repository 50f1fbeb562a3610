/**
 * The agent's uploader against a fake CellLink client: a file the coordinator refuses for good is
 * set aside in `<dataDir>/rejected/` (moved with its sidecar, never deleted) and the files behind it
 * still upload; a transient failure keeps the file queued and is retried.
 */
import { strict as assert } from "node:assert";
import { EventEmitter } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Metadata, status, type ServiceError } from "@grpc/grpc-js";
import type { ArtifactChunk, ArtifactProgress, ArtifactRef, CellLinkClient } from "../../protocol/gen/cell.js";
import { ArtifactStore } from "../../cell-agent/upload/artifact-store.js";
import { permanentRefusal, Uploader } from "../../cell-agent/upload/uploader.js";
import { eventually } from "../support/eventually.js";

function serviceError(code: status, reason: string, message: string): ServiceError {
  const metadata = new Metadata();
  metadata.set("assay-reason", reason);
  return Object.assign(new Error(`${code} ${status[code]}: ${reason}: ${message}`), { code, details: `${reason}: ${message}`, metadata });
}

/**
 * One coordinator's CellLink, as the uploader sees it. ArtifactStatus answers per file name from
 * `refuse` (an error) or with the bytes `uploaded` holds; UploadArtifact appends chunks there at
 * their offset. Coordinators sharing one store share `uploaded`. `dieAfterChunks` makes the next
 * upload fail UNAVAILABLE after that many chunks, as when the coordinator goes away mid-file.
 */
class FakeClient {
  readonly refuse = new Map<string, ServiceError>();
  readonly statusCalls: string[] = [];
  /** Offset of the first chunk of each UploadArtifact call. */
  readonly startOffsets: number[] = [];
  dieAfterChunks: number | undefined;
  /** Calls stalled by `stallAtOffset`, to see that they were cancelled. */
  readonly stalledCalls: Array<{ cancelled: boolean }> = [];

  constructor(readonly uploaded = new Map<string, Buffer>()) {}

  /** When set, an UploadArtifact call whose first chunk is at this offset takes that chunk and no more (its flow control never drains). */
  stallAtOffset: number | undefined;

  artifactStatus(ref: ArtifactRef, _metadata: Metadata, options: { deadline?: number }, callback: (error: ServiceError | null, progress: ArtifactProgress) => void): void {
    assert.ok(typeof options.deadline === "number" && options.deadline > Date.now(), "ArtifactStatus carries a deadline");
    this.statusCalls.push(ref.fileName);
    const error = this.refuse.get(ref.fileName);
    const receivedBytes = this.uploaded.get(ref.fileName)?.length ?? 0;
    setImmediate(() => (error ? callback(error, undefined as never) : callback(null, { receivedBytes, complete: false })));
  }

  uploadArtifact(_metadata: Metadata, callback: (error: ServiceError | null, progress: ArtifactProgress) => void) {
    let ref: ArtifactRef | undefined;
    let chunks = 0;
    let dead = false;
    let stalled = false;
    const call = Object.assign(new EventEmitter(), {
      write: (chunk: ArtifactChunk) => {
        if (dead) return true;
        if (stalled) return false;
        if (!ref) this.startOffsets.push(chunk.offset);
        ref ??= chunk.ref;
        if (chunks === 0 && chunk.offset === this.stallAtOffset) {
          this.stallAtOffset = undefined;
          stalled = true;
          this.stalledCalls.push(call);
        }
        const held = this.uploaded.get(ref!.fileName) ?? Buffer.alloc(0);
        assert.equal(chunk.offset, held.length, "chunks continue at the offset the store holds");
        this.uploaded.set(ref!.fileName, Buffer.concat([held, Buffer.from(chunk.data)]));
        if (++chunks === this.dieAfterChunks) {
          dead = true;
          this.dieAfterChunks = undefined;
          setImmediate(() => callback(serviceError(status.UNAVAILABLE, "shutting_down", "the coordinator went away"), undefined as never));
        }
        return !stalled;
      },
      end: () => {
        if (dead) return;
        const data = this.uploaded.get(ref!.fileName)!;
        setImmediate(() => callback(null, { receivedBytes: data.length, complete: data.length === ref!.bytes }));
      },
      cancel: () => {
        call.cancelled = true;
        if (stalled) setImmediate(() => callback(serviceError(status.CANCELLED, "cancelled", "Cancelled on client"), undefined as never));
      },
      cancelled: false,
    });
    return call;
  }
}

describe("agent uploader", () => {
  let dataDir: string;
  let store: ArtifactStore;
  let client: FakeClient;
  let lines: string[];
  let setAside: Array<[string, string]>;
  let uploader: Uploader | undefined;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "agent-uploader-"));
    store = new ArtifactStore(join(dataDir, "outbox"));
    await store.init();
    client = new FakeClient();
    lines = [];
    setAside = [];
  });

  afterEach(() => {
    uploader?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Queues `<name>` (announced with `seq`) as the agent does after an episode. */
  async function queue(episodeId: string, name: string, seq: number, kind: "mcap" | "video" = "mcap"): Promise<void> {
    const source = join(dataDir, "recordings", name);
    mkdirSync(join(dataDir, "recordings"), { recursive: true });
    writeFileSync(source, `bytes of ${name} `.repeat(100));
    store.announce({ ...(await store.take(episodeId, kind, source)), announcedSeq: seq });
  }

  function start(retry?: { initialMs: number; maxMs: number }, current: () => FakeClient = () => client, stallMs?: number): Uploader {
    uploader = new Uploader({
      ...(stallMs ? { stallMs } : {}),
      store, client: () => current() as unknown as CellLinkClient, metadata: () => new Metadata(), chunkBytes: 64,
      ackedSeq: () => 100, linkUp: () => true, onBacklog: () => undefined,
      onSetAside: (artifact, reason) => setAside.push([artifact.ref.fileName, reason]),
      log: (line) => lines.push(line), retry,
    });
    return uploader;
  }

  it("sets aside what the coordinator refuses for good, keeps it on disk with its sidecar, and uploads the files behind it", async () => {
    await queue("ep-a", "ep-a.mcap", 1);
    await queue("ep-b", "ep-b.mcap", 2);
    await queue("ep-c", "ep-c.mcap", 3);
    const original = readFileSync(join(store.dir, "ep-a.mcap"));
    client.refuse.set("ep-a.mcap", serviceError(status.PERMISSION_DENIED, "artifact_not_yours", "episode ep-a was finished by cell so101-b, not so101-c"));
    client.refuse.set("ep-b.mcap", serviceError(status.NOT_FOUND, "artifact_unknown", "no mcap artifact was announced for episode ep-b"));
    const up = start();
    up.kick();
    await up.idle();

    assert.deepEqual([...client.uploaded.keys()], ["ep-c.mcap"]);
    assert.deepEqual(readdirSync(store.dir), [], "the queue is empty");
    const rejected = join(dataDir, "rejected");
    assert.deepEqual(readdirSync(rejected).sort(), ["ep-a.mcap", "ep-a.mcap.json", "ep-b.mcap", "ep-b.mcap.json"]);
    assert.deepEqual(readFileSync(join(rejected, "ep-a.mcap")), original, "moved, not rewritten");
    const sidecar = JSON.parse(readFileSync(join(rejected, "ep-a.mcap.json"), "utf8"));
    assert.equal(sidecar.ref.episodeId, "ep-a");
    assert.equal(sidecar.announced_seq, 1);
    assert.match(sidecar.rejected.why, /^artifact_not_yours: episode ep-a was finished by cell so101-b/);
    assert.deepEqual(setAside, [["ep-a.mcap", "artifact_not_yours"], ["ep-b.mcap", "artifact_unknown"]]);
    assert.ok(lines.some((l) => /the coordinator will not take ep-a\.mcap .*moved, not deleted, to .*rejected/.test(l)), lines.join("\n"));

    // A later pass does not try them again.
    client.statusCalls.length = 0;
    up.kick();
    await up.idle();
    assert.deepEqual(client.statusCalls, []);
  });

  it("moves on past a queued record whose file is gone and that the coordinator does not hold", async () => {
    await queue("ep-a", "ep-a.mp4", 1, "video");
    await queue("ep-b", "ep-b.mcap", 2);
    // The agent was stopped between deleting an uploaded file and its sidecar, or the disk lost it.
    rmSync(join(store.dir, "ep-a.mp4"));
    const up = start();
    up.kick();
    await up.idle();

    assert.deepEqual([...client.uploaded.keys()], ["ep-b.mcap"], "the file behind it still uploads");
    assert.deepEqual(readdirSync(store.dir), [], "the queue is empty");
    const sidecar = JSON.parse(readFileSync(join(dataDir, "rejected", "ep-a.mp4.json"), "utf8"));
    assert.match(sidecar.rejected.why, /^file_missing: the file is no longer in the outbox and the coordinator holds 0 of its \d+ bytes/);
    assert.deepEqual(setAside, [["ep-a.mp4", "file_missing"]]);
    assert.ok(lines.some((l) => /ep-a\.mp4 \(video of episode ep-a\) cannot be uploaded/.test(l)), lines.join("\n"));
  });

  it("a second refused file of the same name is set aside next to the first", async () => {
    await queue("ep-a", "ep-a.mcap", 1);
    client.refuse.set("ep-a.mcap", serviceError(status.NOT_FOUND, "artifact_unknown", "never announced"));
    const up = start();
    up.kick();
    await up.idle();
    await queue("ep-a", "ep-a.mcap", 2);
    up.kick();
    await up.idle();
    assert.deepEqual(readdirSync(join(dataDir, "rejected")).sort(), ["ep-a.mcap", "ep-a.mcap-2", "ep-a.mcap-2.json", "ep-a.mcap.json"]);
  });

  it("keeps a file queued through transient failures and retries it with backoff", async () => {
    await queue("ep-a", "ep-a.mcap", 1);
    await queue("ep-b", "ep-b.mcap", 2);
    client.refuse.set("ep-a.mcap", serviceError(status.UNAVAILABLE, "shutting_down", "the coordinator is restarting"));
    const up = start({ initialMs: 20, maxMs: 40 });
    up.kick();
    await up.idle();
    assert.deepEqual(client.statusCalls, ["ep-a.mcap"], "the pass stops at a transient failure");
    assert.ok(existsSync(join(store.dir, "ep-a.mcap")) && existsSync(join(store.dir, "ep-a.mcap.json")));
    assert.equal(existsSync(join(dataDir, "rejected")), false);
    assert.match(lines.join("\n"), /upload of ep-a\.mcap stopped .*next try in/);

    // Retried on the timer until the coordinator is back.
    await eventually("two retries", () => client.statusCalls.length >= 3, { deadlineMs: 5_000 }).catch(() => undefined);
    assert.ok(client.statusCalls.length >= 3, `retried: ${client.statusCalls.join(", ")}`);
    client.refuse.delete("ep-a.mcap");
    await eventually("both uploads", () => client.uploaded.size >= 2, { deadlineMs: 5_000 }).catch(() => undefined);
    await up.idle();
    assert.deepEqual([...client.uploaded.keys()].sort(), ["ep-a.mcap", "ep-b.mcap"]);
    assert.deepEqual(readdirSync(store.dir), []);
    assert.deepEqual(setAside, []);
  });

  it("after a failover resumes a cut upload on the new coordinator, from the offset it reports", async () => {
    await queue("ep-a", "ep-a.mcap", 1);
    const original = readFileSync(join(store.dir, "ep-a.mcap"));
    // Coordinators A and B share one store; A goes away after two 64-byte chunks.
    const a = client;
    const b = new FakeClient(a.uploaded);
    a.dieAfterChunks = 2;
    let current = a;
    const up = start({ initialMs: 60_000, maxMs: 60_000 }, () => current);
    up.kick();
    await up.idle();
    assert.equal(a.uploaded.get("ep-a.mcap")?.length, 128, "A took two chunks before it went away");
    assert.match(lines.join("\n"), /upload of ep-a\.mcap stopped .*will resume from the coordinator's offset/);

    // The link fails over to B and its Welcome kicks the uploader.
    current = b;
    up.kick();
    await up.idle();
    assert.deepEqual(b.statusCalls, ["ep-a.mcap"], "B is asked for its offset");
    assert.deepEqual(b.startOffsets, [128], "the upload continues where A stopped, on B");
    assert.deepEqual(b.uploaded.get("ep-a.mcap"), original);
    assert.deepEqual(readdirSync(store.dir), [], "the local copy is deleted once B confirms the file");
  });

  it("cancels an upload whose stream takes no chunk for stallMs, ends the pass, and resumes from the coordinator's offset", async () => {
    await queue("ep-a", "ep-a.mcap", 1);
    const original = readFileSync(join(store.dir, "ep-a.mcap"));
    // The coordinator takes the first chunk of the second call and then nothing: its flow control never drains.
    client.dieAfterChunks = 2;
    client.stallAtOffset = 128;
    const up = start({ initialMs: 60_000, maxMs: 60_000 }, () => client, 50);
    up.kick();
    await up.idle();
    assert.equal(client.uploaded.get("ep-a.mcap")?.length, 128, "the first call took two chunks");
    up.kick();
    // Without the stall deadline this pass would never end (the write loop waits for a 'drain' that never comes).
    await up.idle();
    assert.equal(client.stalledCalls.length, 1);
    assert.equal(client.stalledCalls[0]!.cancelled, true, "the stalled call was cancelled");
    assert.match(lines.at(-1)!, /upload of ep-a\.mcap stopped \(no progress for 0\.1 s at byte 192 of \d+ .*cancelled\); will resume from the coordinator's offset/);
    assert.ok(existsSync(join(store.dir, "ep-a.mcap")), "still queued");

    up.kick();
    await up.idle();
    assert.deepEqual(client.startOffsets, [0, 128, 192], "each call starts where the coordinator's copy ends");
    assert.deepEqual(client.uploaded.get("ep-a.mcap"), original);
    assert.deepEqual(readdirSync(store.dir), []);
  });

  it("sends a file again from 0 when the coordinator it fails over to holds none of it (the part was in the old one's spool)", async () => {
    await queue("ep-a", "ep-a.mcap", 1);
    const original = readFileSync(join(store.dir, "ep-a.mcap"));
    // A takes three 64-byte chunks into its own spool, then goes away; B shares the bucket and
    // the database but not A's spool, so it holds nothing of the file.
    const a = client;
    const b = new FakeClient();
    a.dieAfterChunks = 3;
    let current = a;
    const up = start({ initialMs: 60_000, maxMs: 60_000 }, () => current);
    up.kick();
    await up.idle();
    assert.equal(a.uploaded.get("ep-a.mcap")?.length, 192);
    assert.ok(existsSync(join(store.dir, "ep-a.mcap")), "still queued");

    current = b;
    up.kick();
    await up.idle();
    assert.deepEqual(b.startOffsets, [0], "started again from 0");
    assert.deepEqual(b.uploaded.get("ep-a.mcap"), original, "the whole file, once");
    assert.deepEqual(readdirSync(store.dir), []);
  });

  it("tells refusals for good from everything else", () => {
    assert.equal(permanentRefusal(serviceError(status.PERMISSION_DENIED, "artifact_not_yours", "x")), "artifact_not_yours");
    assert.equal(permanentRefusal(serviceError(status.NOT_FOUND, "artifact_unknown", "x")), "artifact_unknown");
    // From the details' prefix when the trailer is missing.
    assert.equal(permanentRefusal({ code: status.NOT_FOUND, details: "artifact_unknown: no mcap artifact", metadata: new Metadata() }), "artifact_unknown");
    assert.equal(permanentRefusal(serviceError(status.UNAVAILABLE, "heartbeat_timeout", "x")), undefined);
    assert.equal(permanentRefusal({ code: status.DEADLINE_EXCEEDED, details: "Deadline exceeded", metadata: new Metadata() }), undefined);
    assert.equal(permanentRefusal({ code: status.NOT_FOUND, details: "no such method", metadata: new Metadata() }), undefined);
    assert.equal(permanentRefusal(serviceError(status.INTERNAL, "artifact_not_yours", "wrong code")), undefined);
    assert.equal(permanentRefusal(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })), undefined);
  });
});
