/**
 * Faults an emulated servo bus can inflict on its replies: by probability from a seeded PRNG, or
 * exactly on the next N replies. Explicit triggers are used before probabilities are drawn.
 */
import { mulberry32 } from "../../protocol/prng.js";

export type ReplyFault = "drop" | "corruptChecksum" | "short" | "garbage";

export interface FaultProbabilities {
  /** Reply never sent. */
  drop?: number;
  /** Last byte (checksum / CRC high byte) flipped. */
  corruptChecksum?: number;
  /** Reply cut off before its end. */
  short?: number;
  /** 1-8 random bytes sent before the reply. */
  garbage?: number;
}

export interface FaultOptions extends FaultProbabilities {
  /** PRNG seed (default 1). */
  seed?: number;
}

export class FaultInjector {
  private readonly random: () => number;
  private readonly queued: ReplyFault[] = [];
  /** How many replies each fault hit, for test assertions. */
  readonly applied: Record<ReplyFault, number> = { drop: 0, corruptChecksum: 0, short: 0, garbage: 0 };

  constructor(private probabilities: FaultOptions = {}) {
    // mulberry32 (protocol/prng.ts): small, fast, deterministic.
    this.random = mulberry32(probabilities.seed ?? 1);
  }

  /** The next `count` replies suffer `fault` (in addition to anything already queued). */
  injectNext(fault: ReplyFault, count = 1): void {
    for (let i = 0; i < count; i++) this.queued.push(fault);
  }

  setProbabilities(probabilities: FaultProbabilities): void {
    this.probabilities = { ...this.probabilities, ...probabilities };
  }

  /** Returns the bytes to actually send for one reply (possibly none). */
  apply(reply: Uint8Array): Uint8Array {
    const fault = this.queued.shift() ?? this.draw();
    if (!fault) return reply;
    this.applied[fault]++;
    switch (fault) {
      case "drop":
        return new Uint8Array(0);
      case "corruptChecksum": {
        const out = reply.slice();
        out[out.length - 1] ^= 0xff;
        return out;
      }
      case "short":
        return reply.slice(0, Math.max(2, reply.length - 1 - Math.floor(this.random() * (reply.length - 3))));
      case "garbage": {
        const n = 1 + Math.floor(this.random() * 8);
        const junk = Array.from({ length: n }, () => Math.floor(this.random() * 256));
        const out = new Uint8Array(n + reply.length);
        out.set(junk, 0);
        out.set(reply, n);
        return out;
      }
    }
  }

  private draw(): ReplyFault | null {
    const p = this.probabilities;
    for (const fault of ["drop", "corruptChecksum", "short", "garbage"] as const) {
      const chance = p[fault] ?? 0;
      if (chance > 0 && this.random() < chance) return fault;
    }
    return null;
  }
}
