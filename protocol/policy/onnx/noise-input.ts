/**
 * The `noise` input of a sampling policy (diffusion, flow matching): standard normal draws scaled
 * by `inference.temp`, from a generator seeded with the episode's seed, so an episode's actions
 * replay exactly and temp 0 gives the sampler's deterministic path.
 */
import { mulberry32, type Uniform } from "../../prng.js";

/** Seeded N(0, temp^2) draws; one generator per episode. */
export class GaussianNoise {
  private uniform: Uniform;
  private spare: number | undefined;

  constructor(seed: number, private readonly temp: number) {
    this.uniform = mulberry32(seed);
  }

  /** The next `count` draws of N(0, temp^2). */
  sample(count: number): Float32Array {
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = this.temp * this.standardNormal();
    return out;
  }

  /** Box-Muller: two normals per two uniforms; the second is kept for the next call. */
  private standardNormal(): number {
    if (this.spare !== undefined) {
      const value = this.spare;
      this.spare = undefined;
      return value;
    }
    const u = 1 - this.uniform(); // (0, 1]: log(u) stays finite
    const v = this.uniform();
    const radius = Math.sqrt(-2 * Math.log(u));
    this.spare = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v);
  }
}
