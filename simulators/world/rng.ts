/**
 * Seeded pseudo-random streams for the simulator. Each concern (physics, sensor noise, pixels)
 * draws from its own stream so that, say, capturing one more camera frame never changes where a
 * cube lands: an episode stays deterministic for its seed whatever the agent reads.
 */

import { mulberry32, type Uniform } from "../../protocol/prng.js";

export { mulberry32, type Uniform };

/** Mixes a seed with a label (FNV-1a over the label), so streams for different purposes differ. */
export function deriveSeed(seed: number, label: string): number {
  let hash = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  for (let i = 0; i < label.length; i++) {
    hash ^= label.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** A seeded stream with the draws the simulator needs. */
export class SimRandom {
  private readonly next: Uniform;
  private spare: number | undefined;

  constructor(seed: number, label = "") {
    this.next = mulberry32(deriveSeed(seed, label));
  }

  uniform(): number {
    return this.next();
  }

  /** Uniform in [-halfRange, halfRange]. */
  symmetric(halfRange: number): number {
    return (this.next() * 2 - 1) * halfRange;
  }

  /** Normal with mean 0 and the given standard deviation (Box-Muller, pairs cached). */
  gaussian(sigma = 1): number {
    if (this.spare !== undefined) {
      const value = this.spare;
      this.spare = undefined;
      return value * sigma;
    }
    const u = Math.max(this.next(), 1e-12);
    const v = this.next();
    const radius = Math.sqrt(-2 * Math.log(u));
    this.spare = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v) * sigma;
  }
}
