/**
 * The seeded generator both sides of the contract use. An episode's plan is realized on the cell
 * from its seed, and a replay spec must reproduce it on any machine and in any later release, so the
 * algorithm is fixed here, once: mulberry32 (32-bit state; plenty for layouts, noise and Monte Carlo).
 */

/** A uniform draw in [0, 1). */
export type Uniform = () => number;

export function mulberry32(seed: number): Uniform {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
