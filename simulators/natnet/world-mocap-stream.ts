/**
 * Streams a SimWorld's rigid bodies (task objects, distractors and the "gripper" fingertip) through a
 * SimNatNetServer on simulated time: frames fall every 1 / rateHz from the world's last placement of a
 * scene (their numbers go on increasing across placements). The world only moves
 * when the simulated clock steps it, so `take()` is called after each step: it takes the newest frame
 * due (the world cannot be asked for past instants, so a step over several frame periods takes one
 * frame and the numbers in between are skipped, as a client sees dropped frames). `flush()` sends the
 * newest frame taken, if it has not gone out yet; `sync()` does both.
 *
 * A simulated cell takes a frame after every step but sends only when the clock is about to wake the
 * agent, which reads nothing but the newest frame: the client sees the same newest frame as if every
 * frame had been sent, without 120 datagrams a simulated second to encode, send and decode.
 *
 * Marker noise is drawn when a frame is taken (sent or not), from a stream of its own seeded by the
 * world's scene and the time since it was placed (`SimWorld.randomSincePlacement`), as the encoders' and
 * the pixels' noise are: a frame's noise does not depend on how often frames are sent, on the cell's
 * earlier episodes, or on how long the cell sat idle before this one, so a seeded episode reads the same
 * poses on any cell, in any process, after any history.
 */
import type { ObjectPose } from "../../cell-agent/hardware/types.js";
import type { SimWorld } from "../world/sim-world.js";
import type { SimNatNetServer } from "./natnet-server.js";

export interface WorldMocapStreamOptions {
  /** Frames per simulated second (default 120, a common Motive rate). */
  rateHz?: number;
  /** Standard deviation of position noise per axis, metres (default 0.0002, 0.2 mm). */
  positionNoiseM?: number;
}

export class WorldMocapStream {
  private readonly rateHz: number;
  private readonly noiseM: number;
  private lastFrame = -1;
  private lastPoses: ObjectPose[] = [];
  /** Number of the newest frame sent, or -1. */
  private sentFrame = -1;
  /** The frame grid: frame `gridBase` falls at the world's time `gridStartNs` (its last placement). */
  private gridStartNs = 0n;
  private gridBase = 0;

  constructor(private readonly world: SimWorld, private readonly server: SimNatNetServer, options: WorldMocapStreamOptions = {}) {
    this.rateHz = options.rateHz ?? 120;
    if (!(this.rateHz > 0)) throw new RangeError(`mocap stream rateHz must be positive; got ${this.rateHz}`);
    this.noiseM = options.positionNoiseM ?? 0.0002;
  }

  /** Number of the frame due at the world's current time. */
  frameDue(): number {
    if (this.world.placedAtNs !== this.gridStartNs) {
      // A scene was placed: the frame grid starts again there, numbers still increasing, so the frames an
      // episode reads fall at the same times after its placement whatever the cell's clock read before.
      this.gridStartNs = this.world.placedAtNs;
      this.gridBase = this.lastFrame + 1;
    }
    return this.gridBase + Math.floor((Number(this.world.tNs - this.gridStartNs) / 1e9) * this.rateHz + 1e-9);
  }

  /** Takes the frame due now (the world's poses with marker noise) unless it was taken already; returns its number, or null when nothing new was due. */
  take(): number | null {
    const due = this.frameDue();
    if (due <= this.lastFrame) return null;
    this.lastFrame = due;
    const noiseM = this.noiseM;
    const poses: ObjectPose[] = this.world.poses();
    if (noiseM > 0) {
      const random = this.world.randomSincePlacement("mocap");
      for (let i = 0; i < poses.length; i++) {
        const p = poses[i].positionM;
        poses[i] = { ...poses[i], positionM: [p[0] + random.gaussian(noiseM), p[1] + random.gaussian(noiseM), p[2] + random.gaussian(noiseM)] };
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
