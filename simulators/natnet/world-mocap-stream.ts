/**
 * Streams a SimWorld's rigid bodies (task objects, distractors and the "gripper" fingertip) through a
 * SimNatNetServer on simulated time: frame n stands for the instant n / rateHz. The world only moves
 * when the simulated clock steps it, so `sync()` is called after each step; it sends the newest frame
 * due (the world cannot be asked for past instants, so a step over several frame periods sends one
 * frame and the numbers in between are skipped, as a client sees dropped frames).
 *
 * Marker noise comes from this stream's own seeded random stream and is drawn only when a frame is
 * sent, so the world's sensor noise does not depend on how often mocap is streamed.
 */
import type { ObjectPose } from "../../cell-agent/hardware/types.js";
import { SimRandom } from "../world/rng.js";
import type { SimWorld } from "../world/sim-world.js";
import type { SimNatNetServer } from "./natnet-server.js";

export interface WorldMocapStreamOptions {
  /** Frames per simulated second (default 120, a common Motive rate). */
  rateHz?: number;
  /** Standard deviation of position noise per axis, metres (default 0.0002, 0.2 mm). */
  positionNoiseM?: number;
  /** Seeds the noise (default 0). */
  seed?: number;
}

export class WorldMocapStream {
  private readonly rateHz: number;
  private readonly noiseM: number;
  private readonly random: SimRandom;
  private lastFrame = -1;
  private lastPoses: ObjectPose[] = [];

  constructor(private readonly world: SimWorld, private readonly server: SimNatNetServer, options: WorldMocapStreamOptions = {}) {
    this.rateHz = options.rateHz ?? 120;
    if (!(this.rateHz > 0)) throw new RangeError(`mocap stream rateHz must be positive; got ${this.rateHz}`);
    this.noiseM = options.positionNoiseM ?? 0.0002;
    this.random = new SimRandom(options.seed ?? 0, "mocap");
  }

  /** Number of the frame due at the world's current time. */
  frameDue(): number {
    return Math.floor((Number(this.world.tNs) / 1e9) * this.rateHz + 1e-9);
  }

  /** Sends the frame due now unless it was sent already; returns its number, or null when nothing new was due. */
  sync(): number | null {
    const due = this.frameDue();
    if (due <= this.lastFrame) return null;
    this.lastFrame = due;
    const poses: ObjectPose[] = this.world.poses().map((pose) => ({
      ...pose,
      positionM: this.noiseM > 0 ? (pose.positionM.map((v) => v + this.random.gaussian(this.noiseM)) as [number, number, number]) : pose.positionM,
    }));
    this.lastPoses = poses;
    this.server.sendFrame(due, due / this.rateHz, poses);
    return due;
  }

  /** Sends the last frame again (for a client that connected after it went out); returns its number. */
  resend(): number {
    if (this.lastFrame < 0) return this.sync()!;
    this.server.sendFrame(this.lastFrame, this.lastFrame / this.rateHz, this.lastPoses);
    return this.lastFrame;
  }
}
