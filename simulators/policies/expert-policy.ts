/**
 * "assay/ref-policy:expert": a careful scripted picker that acts only on what it observes.
 *
 * It finds the red cube in the overhead image with an adaptive threshold and a size check (so dim,
 * tinted light and red clutter do not fool it), turns the centroid into world coordinates with the
 * published camera calibration and the yaw from the blob's shape, hovers above it, refines the
 * estimate from the wrist camera, aligns the wrist roll with a cube face, descends slowly, closes,
 * and lifts smoothly to 12 cm. Without an overhead camera it first surveys from high up with the
 * wrist camera.
 */
import type { Observation, PolicySession } from "../../cell-agent/hardware/types.js";
import { TOP_CAMERA, topPixelToWorld, wristMetresPerPx, wristPixelToWorld } from "../render/camera-calibration.js";
import type { Embodiment } from "../world/embodiments.js";
import { blendArm, goals, measuredArm, measuredTool, minJerk, reachableArm, toolYawFor } from "./motion.js";
import { adaptiveRedMask, components, decodeFrame, squarePose, type Image } from "./vision.js";

type Phase = "locate" | "survey" | "approach" | "refine" | "descend" | "close" | "lift" | "hold";

const NEXT: Record<Phase, Phase[]> = {
  locate: ["approach", "survey"],
  survey: ["approach"],
  approach: ["refine"],
  refine: ["approach", "descend"],
  descend: ["close"],
  close: ["lift"],
  lift: ["hold"],
  hold: [],
};

const CUBE_SIDE_M = 0.03;
const HOVER_Z_M = 0.08;
const GRASP_Z_M = 0.016;
const LIFT_Z_M = 0.12;
const SURVEY_POINT: [number, number, number] = [0.2, 0, 0.25];
/** Where the task puts the cube when nothing is seen. */
const NOMINAL_CUBE = { xM: 0.22, yM: 0, yawRad: 0 };

interface CubeEstimate { xM: number; yM: number; yawRad: number }

/** The best cube-sized red blob among world-frame pixel sets, or null. */
function pickCube(blobs: Array<Array<[number, number]>>, expectedPx: number, near?: CubeEstimate): CubeEstimate | null {
  let best: CubeEstimate | null = null;
  let bestScore = Infinity;
  for (const points of blobs) {
    const ratio = points.length / expectedPx;
    if (ratio < 0.35 || ratio > 2.2) continue;
    const pose = squarePose(points);
    const distance = near ? Math.hypot(pose.xM - near.xM, pose.yM - near.yM) : 0;
    const score = Math.abs(Math.log(ratio)) + distance * 20;
    if (score < bestScore) {
      bestScore = score;
      best = pose;
    }
  }
  return best;
}

function blobsOf(image: Image, toWorld: (column: number, row: number) => [number, number]): Array<Array<[number, number]>> {
  return components(adaptiveRedMask(image), image.width).map((pixels) =>
    pixels.map((p) => {
      const c = p % image.width;
      return toWorld(c + 0.5, (p - c) / image.width + 0.5);
    }),
  );
}

export class ExpertPolicy implements PolicySession {
  private phase: Phase = "locate";
  private phaseStartNs = 0n;
  private fromArm: number[] = [];
  private target: CubeEstimate = NOMINAL_CUBE;
  private refineSamples: CubeEstimate[] = [];
  private refineRounds = 0;
  private attempts = 0;
  private lastGoal: number[] = [];
  private graspZ = GRASP_Z_M;

  constructor(private readonly embodiment: Embodiment) {}

  async reset(): Promise<void> {
    this.phase = "locate";
    this.phaseStartNs = 0n;
    this.target = NOMINAL_CUBE;
    this.refineSamples = [];
    this.refineRounds = 0;
    this.attempts = 0;
    this.lastGoal = [];
  }

  async close(): Promise<void> {}

  async act(observation: Observation): Promise<number[]> {
    if (this.lastGoal.length === 0) {
      this.phaseStartNs = observation.tNs;
      this.fromArm = measuredArm(this.embodiment, observation);
      this.lastGoal = goals(this.embodiment, this.fromArm, 1);
    }
    const elapsedS = Number(observation.tNs - this.phaseStartNs) / 1e9;
    const goal = this.step(observation, elapsedS);
    if (goal) this.lastGoal = goal;
    return this.lastGoal;
  }

  private enter(next: Phase, observation: Observation): void {
    if (!NEXT[this.phase].includes(next)) throw new Error(`expert policy: illegal phase change ${this.phase} -> ${next}`);
    this.phase = next;
    this.phaseStartNs = observation.tNs;
    this.fromArm = measuredArm(this.embodiment, observation);
  }

  private armAt(z: number): number[] | null {
    return reachableArm([this.target.xM, this.target.yM, z], toolYawFor(this.target.yawRad, this.target.xM, this.target.yM));
  }

  private step(observation: Observation, elapsedS: number): number[] | null {
    switch (this.phase) {
      case "locate": {
        const top = observation.cameras.top;
        if (!top) {
          this.enter("survey", observation);
          return null;
        }
        const image = decodeFrame(top);
        const found = pickCube(blobsOf(image, (c, r) => topPixelToWorld(c, r)), (CUBE_SIDE_M / TOP_CAMERA.metresPerPx) ** 2);
        if (found || ++this.attempts >= 5) {
          this.target = found ?? NOMINAL_CUBE;
          this.enter("approach", observation);
        }
        return null;
      }
      case "survey": {
        const arm = reachableArm(SURVEY_POINT, 0);
        if (elapsedS < 2) return arm ? goals(this.embodiment, blendArm(this.fromArm, arm, elapsedS / 1.6), 1) : null;
        const found = this.fromWrist(observation);
        if (found || elapsedS > 3) {
          this.target = found ?? NOMINAL_CUBE;
          this.enter("approach", observation);
        }
        return null;
      }
      case "approach": {
        const durationS = this.refineRounds === 0 ? 1.6 : 0.6;
        const hover = this.armAt(HOVER_Z_M);
        if (!hover) return null;
        if (elapsedS >= durationS + 0.25) {
          this.refineSamples = [];
          this.enter("refine", observation);
        }
        return goals(this.embodiment, blendArm(this.fromArm, hover, elapsedS / durationS), 1);
      }
      case "refine": {
        const seen = this.fromWrist(observation);
        if (seen) this.refineSamples.push(seen);
        if (this.refineSamples.length < 3 && elapsedS < 0.5) return null;
        this.refineRounds++;
        if (this.refineSamples.length > 0) {
          const previous = this.target;
          this.target = meanEstimate(this.refineSamples);
          const movedM = Math.hypot(this.target.xM - previous.xM, this.target.yM - previous.yM);
          if ((movedM > 0.003 || Math.abs(this.target.yawRad - previous.yawRad) > 0.05) && this.refineRounds < 3) {
            this.enter("approach", observation);
            return null;
          }
        }
        this.enter("descend", observation);
        return null;
      }
      case "descend": {
        const z = HOVER_Z_M + (this.graspZ - HOVER_Z_M) * minJerk(elapsedS / 1.4);
        if (elapsedS >= 1.6) this.enter("close", observation);
        const arm = this.armAt(z);
        return arm ? goals(this.embodiment, arm, 1) : null;
      }
      case "close": {
        if (elapsedS >= 0.8) this.enter("lift", observation);
        const arm = this.armAt(this.graspZ);
        return arm ? goals(this.embodiment, arm, 0) : null;
      }
      case "lift": {
        const z = this.graspZ + (LIFT_Z_M - this.graspZ) * minJerk(elapsedS / 2);
        if (elapsedS >= 2.1) this.enter("hold", observation);
        const arm = this.armAt(z);
        return arm ? goals(this.embodiment, arm, 0) : null;
      }
      case "hold":
        return null;
    }
  }

  /** The cube as the wrist camera sees it now, or null. */
  private fromWrist(observation: Observation): CubeEstimate | null {
    const frame = observation.cameras.wrist;
    if (!frame) return null;
    const tool = measuredTool(this.embodiment, observation);
    const tip = { xM: tool.positionM[0], yM: tool.positionM[1], zM: tool.positionM[2], yawRad: tool.yawRad };
    const image = decodeFrame(frame);
    // The wrist camera is a pinhole: what it sees of a cube on the table is mostly its top face,
    // a cube's side above the table, so pixels are taken through to that plane.
    const expectedPx = (CUBE_SIDE_M / wristMetresPerPx(tip.zM, CUBE_SIDE_M)) ** 2;
    return pickCube(blobsOf(image, (c, r) => wristPixelToWorld(c, r, tip, CUBE_SIDE_M)), expectedPx, this.phase === "survey" ? undefined : this.target);
  }
}

/** Mean position, and the circular mean of yaw with 90-degree symmetry. */
function meanEstimate(samples: CubeEstimate[]): CubeEstimate {
  let x = 0, y = 0, s = 0, c = 0;
  for (const e of samples) {
    x += e.xM;
    y += e.yM;
    s += Math.sin(4 * e.yawRad);
    c += Math.cos(4 * e.yawRad);
  }
  return { xM: x / samples.length, yM: y / samples.length, yawRad: Math.atan2(s, c) / 4 };
}
