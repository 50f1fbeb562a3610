/**
 * Seeded randomness for episode plans. An episode's plan must be the same on every machine and in
 * every later release for the same seed, so this is a fixed algorithm (mulberry32) rather than
 * Math.random, and each purpose (object poses, lighting, distractors, instruction) draws from its
 * own stream so adding a draw to one never shifts another.
 */

import { mulberry32, type Uniform } from "../../protocol/prng.js";

/** A PRNG yielding floats in [0, 1). */
export type Random = Uniform;

export { mulberry32 };

/** FNV-1a over the text, used to fold a label and a (possibly > 32-bit) seed into one 32-bit seed. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** The PRNG stream for one purpose of one episode seed, e.g. `streamFor(seed, "objects")`. */
export function streamFor(seed: number | bigint, purpose: string): Random {
  return mulberry32(fnv1a(`${BigInt(seed).toString()}/${purpose}`));
}

/** Uniform in [-halfRange, +halfRange]. */
export function uniformSymmetric(random: Random, halfRange: number): number {
  return (random() * 2 - 1) * halfRange;
}

/** Uniform point in a disc of the given radius (area-uniform, not radius-uniform). */
export function uniformInDisc(random: Random, radius: number): [number, number] {
  const r = radius * Math.sqrt(random());
  const theta = 2 * Math.PI * random();
  return [r * Math.cos(theta), r * Math.sin(theta)];
}

/** Integer in [min, max], both inclusive. */
export function uniformInt(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** One element of a non-empty list. */
export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}
