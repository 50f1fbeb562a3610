/**
 * The durable outbox: every sequenced AgentMessage is appended (fsynced) to
 * `<dataDir>/outbox.jsonl` before it goes on the wire, and stays pending until the coordinator acks
 * it. After a crash or restart the pending messages are resent, and the seq counter carries on from
 * the highest seq ever written, so a seq is never reused.
 *
 * File format, one JSON object per line:
 *   {"seq": 7, "msg": "<base64 of AgentMessage protobuf>"}   a sequenced message
 *   {"acked": 7}                                           everything up to seq 7 is applied
 *   {"next_seq": 8}                                        written on compaction to keep the counter
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { AgentMessage } from "../../protocol/gen/cell.js";

type Line = { seq: number; msg: string } | { acked: number } | { next_seq: number };

/** Rewrites the file once this many lines have been appended since the last compaction. */
const COMPACT_AFTER_LINES = 512;

export class Outbox {
  private readonly pending = new Map<number, AgentMessage>();
  private nextSeq = 1;
  private ackedSeq = 0;
  private fd: number;
  private linesSinceCompaction = 0;

  /** Opens (or creates) the outbox file and replays it. */
  constructor(private readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    if (existsSync(path)) this.replay(readFileSync(path, "utf8"));
    this.fd = openSync(path, "a");
  }

  /** Outbox of an agent's data directory. */
  static open(dataDir: string): Outbox {
    return new Outbox(join(dataDir, "outbox.jsonl"));
  }

  private replay(content: string): void {
    for (const text of content.split("\n")) {
      if (!text.trim()) continue;
      let line: Line;
      try {
        line = JSON.parse(text) as Line;
      } catch {
        continue; // a torn final line from a crash mid-append: that message was never sent
      }
      if ("seq" in line) {
        this.pending.set(line.seq, AgentMessage.decode(Buffer.from(line.msg, "base64")));
        this.nextSeq = Math.max(this.nextSeq, line.seq + 1);
      } else if ("acked" in line) {
        this.trimTo(line.acked);
      } else if ("next_seq" in line) {
        this.nextSeq = Math.max(this.nextSeq, line.next_seq);
      }
    }
  }

  private append(line: Line): void {
    writeSync(this.fd, JSON.stringify(line) + "\n");
    fsyncSync(this.fd);
    this.linesSinceCompaction++;
  }

  private trimTo(seq: number): void {
    this.ackedSeq = Math.max(this.ackedSeq, seq);
    for (const key of [...this.pending.keys()]) if (key <= seq) this.pending.delete(key);
  }

  /**
   * Assigns the next seq, persists the message, and returns it ready to send. The caller sends it
   * only when connected; otherwise `pendingAfter()` yields it on the next Welcome.
   */
  enqueue(body: Omit<AgentMessage, "seq">): AgentMessage {
    const message = AgentMessage.fromPartial({ ...body, seq: this.nextSeq++ });
    this.append({ seq: message.seq, msg: Buffer.from(AgentMessage.encode(message).finish()).toString("base64") });
    this.pending.set(message.seq, message);
    return message;
  }

  /**
   * The coordinator applies sequenced messages in order, so an Ack (or Welcome.last_seq_applied)
   * for `seq` settles every message up to it.
   */
  ack(seq: number): void {
    if (seq <= this.ackedSeq) return;
    this.trimTo(seq);
    this.append({ acked: seq });
    if (this.linesSinceCompaction >= COMPACT_AFTER_LINES) this.compact();
  }

  /** Unacked messages with seq > `seq`, in order: what to resend after Welcome. */
  pendingAfter(seq: number): AgentMessage[] {
    return [...this.pending.values()].filter((m) => m.seq > seq).sort((a, b) => a.seq - b.seq);
  }

  /** All unacked messages, in order. */
  unacked(): AgentMessage[] {
    return this.pendingAfter(0);
  }

  /** The seq the next `enqueue` will assign. */
  get nextSeqToAssign(): number {
    return this.nextSeq;
  }

  /** Highest seq ever assigned (Hello.last_seq_sent). */
  get lastSeqSent(): number {
    return this.nextSeq - 1;
  }

  /** Highest seq the coordinator has acknowledged. */
  get lastSeqAcked(): number {
    return this.ackedSeq;
  }

  /** Rewrites the file with only the counter, the watermark and the pending messages. */
  compact(): void {
    const tmp = `${this.path}.tmp`;
    const lines: Line[] = [{ next_seq: this.nextSeq }, { acked: this.ackedSeq }];
    for (const message of this.unacked()) {
      lines.push({ seq: message.seq, msg: Buffer.from(AgentMessage.encode(message).finish()).toString("base64") });
    }
    const fd = openSync(tmp, "w");
    writeSync(fd, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    fsyncSync(fd);
    closeSync(fd);
    closeSync(this.fd);
    renameSync(tmp, this.path);
    this.fd = openSync(this.path, "a");
    this.linesSinceCompaction = 0;
  }

  close(): void {
    closeSync(this.fd);
  }
}
