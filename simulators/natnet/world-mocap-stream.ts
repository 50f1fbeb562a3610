/**
 * Streams a SimWorld's rigid bodies (task objects, distractors and the "gripper" fingertip) through a
 * SimNatNetServer on simulated time: frame n stands for the instant n / rateHz. The world only moves
 * when the simulated clock steps it, so `take()` is called after each step: it takes the newest frame
 * due (the world cannot be asked for past instants, so a step over several frame periods takes one
 * frame and the numbers in between are skipped, as a client sees dropped frames). `flush()` sends the
 * newest frame taken, if it has not gone out yet; `sync()` does both.
 *
 * A simulated cell takes a frame after every step but sends only when the clock is about to wake the
 * agent, which reads nothing but the newest frame: the client sees the same newest frame as if every
 * frame had been sent, without 120 datagrams a simulated second to encode, send and decode.
 *
 * Marker noise comes from this stream's own seeded random stream and is drawn when a frame is taken
 * (sent or not), so the world's sensor noise does not depend on how often mocap is streamed and the
 * frames' noise does not depend on how often they are sent.
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
  /** Number of the newest frame sent, or -1. */
  private sentFrame = -1;

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

  /** Takes the frame due now (the world's poses with marker noise) unless it was taken already; returns its number, or null when nothing new was due. */
  take(): number | null {
    const due = this.frameDue();
    if (due <= this.lastFrame) return null;
    this.lastFrame = due;
    const noiseM = this.noiseM;
    const poses: ObjectPose[] = this.world.poses();
    if (noiseM > 0) {
      for (let i = 0; i < poses.length; i++) {
        const p = poses[i].positionM;
        poses[i] = { ...poses[i], positionM: [p[0] + this.random.gaussian(noiseM), p[1] + this.random.gaussian(noiseM), p[2] + this.random.gaussian(noiseM)] };
      }
    }
    this.lastPoses = poses;
    return due;
  }

  /** Sends the newest frame taken unless it went out already; returns its number, or null when there was nothing new to send. */
  flush(): number | null {
    if (this.lastFrame < 0 || this.sentFrame === this.lastFrame) return null;
    this.sentFrame = this.lastFrame;
    this.server.sendFrame(this.lastFrame, this.lastFrame / this.rateHz, this.lastPoses);
    return this.lastFrame;
  }

  /** Takes and sends the frame due now unless it was sent already; returns its number, or null when nothing new was due. */
  sync(): number | null {
    return this.take() === null ? null : this.flush();
  }

  /** Sends the newest frame (again, for a client that connected after it went out); returns its number. */
  resend(): number {
    if (this.lastFrame < 0) this.take();
    this.sentFrame = this.lastFrame;
    this.server.sendFrame(this.lastFrame, this.lastFrame / this.rateHz, this.lastPoses);
    return this.lastFrame;
  }
}
