/**
 * The simulated tabletop: one arm (per embodiments.ts), objects, lighting and simulated time.
 * Devices read and command it; only `advanceTo` moves time, in fixed substeps, so a run is
 * deterministic for its seed however often (and whenever) the devices read it.
 */
import type { JointState, ObjectPose, ResetPlan } from "../../cell-agent/hardware/types.js";
import { DEFAULT_SIM_ENGINE, type SimEngine } from "../physics/engine.js";
import { MujocoScene } from "./mujoco-scene.js";
import { armOf, embodimentFor, openingOf, type Embodiment } from "./embodiments.js";
import { GraspPhysics } from "./grasp.js";
import { forwardKinematics, type ToolPose } from "./kinematics.js";
import { kitAliasOf, makeObject, restZOf, scaledShape, shapeFromSpec, shapeOf, type SimObject } from "./objects.js";
import { deriveSeed, SimRandom } from "./rng.js";
import { NO_CELL_VARIATION, type CellVariation } from "./cell-variation.js";
import type { RenderScene } from "../render/rasterizer.js";
import { DEFAULT_SERVO_LIMITS, ServoJoints, type ServoLimits } from "./servo.js";

export interface SimWorldOptions {
  /** Catalog robot model id, e.g. "so101". */
  model: string;
  /**
   * Seeds physics, sensor noise and pixel noise (separate streams) until the first placeScene; from
   * then on the streams derive from the placed plan, so a replayed plan replays the episode.
   */
  seed: number;
  /** Physics substep, seconds (default 0.002; the MuJoCo engine always steps at 0.002). */
  substepS?: number;
  /** Physics engine (default DEFAULT_SIM_ENGINE, see simulators/physics/engine.ts). */
  engine?: SimEngine;
  /** This cell's own variation (cell-variation.ts; default none): object sizes here, camera mount and colour in the cameras. */
  variation?: CellVariation;
}

/** Counters for tests and logs. */
export interface WorldStats {
  attaches: number;
  drops: number;
  knocks: number;
  tableHits: number;
  /** Substeps in which a finger came down on top of an object and stopped the arm. */
  landings: number;
}

const GRAVITY_MS2 = 9.81;
/** Simulated time a reset spends homing the arm, seconds. */
export const RESET_HOMING_S = 3;
/**
 * Simulated time a reset (or a nudge that put the scene back) lets pass after placing the objects,
 * seconds, as a real reset routine waits for the placed objects to come to rest and the tracker to see
 * them. Placing is instantaneous and devices publish only when time passes (motion capture streams a
 * frame per 1/120 s), so without it the first reading an episode takes would still show the scene
 * before placement (issue 25, item 6).
 */
export const RESET_SETTLE_S = 0.05;
/** Objects are placed with this much settle noise (uniform half range), metres. */
const SETTLE_NOISE_M = 0.0005;
/** Gripper fingers' speed in opening units per second (full stroke in 0.5 s). */
const GRIPPER_OPENING_PER_S = 2;

export class SimWorld {
  readonly embodiment: Embodiment;
  readonly servos: ServoJoints;
  readonly grasp = new GraspPhysics();
  readonly stats: WorldStats = { attaches: 0, drops: 0, knocks: 0, tableHits: 0, landings: 0 };
  objects: SimObject[] = [];
  lighting = "nominal";
  /** Decaying contact force at the wrist, world frame, newtons. */
  readonly contactForceN: [number, number, number] = [0, 0, 0];
  /** Noise streams for devices; physics draws only from `physicsRandom`. */
  sensorRandom: SimRandom;
  pixelRandom: SimRandom;
  physicsRandom: SimRandom;
  private nowNs = 0n;
  private readonly substepNs: bigint;
  private homeRad: number[];
  private tool: ToolPose;
  private velocityMS: [number, number, number] = [0, 0, 0];
  private accelMS2 = 0;
  // --- Engine seam: with MuJoCo, `physics` steps the world and the kinematic step below is unused.
  readonly engine: SimEngine;
  /** The cell's variation: placeScene scales stocked objects by it, SimCamera reads its mount and colour. */
  readonly variation: CellVariation;
  private readonly physics: MujocoScene | null;
  // --- Replay seam: after a placement, every draw depends on the plan and the time since it, not on
  // the cell's earlier episodes or on how often devices read, so a replay spec reproduces an episode.
  private placedNs = 0n;
  private planSeed = 0;

  constructor(options: SimWorldOptions) {
    this.embodiment = embodimentFor(options.model);
    const { dof, gripperJoint, gripperOpenValue } = this.embodiment;
    const limits: ServoLimits[] = Array.from({ length: dof }, (_, i) =>
      i === gripperJoint
        ? { maxSpeedRadS: GRIPPER_OPENING_PER_S * gripperOpenValue, maxAccelRadS2: 40 * gripperOpenValue, gainPerS: 20 }
        : DEFAULT_SERVO_LIMITS,
    );
    this.homeRad = new Array<number>(dof).fill(0);
    this.servos = new ServoJoints(dof, limits, this.homeRad);
    this.substepNs = BigInt(Math.round((options.substepS ?? 0.002) * 1e9));
    this.sensorRandom = new SimRandom(options.seed, "sensors");
    this.pixelRandom = new SimRandom(options.seed, "pixels");
    this.physicsRandom = new SimRandom(options.seed, "physics");
    this.tool = this.computeTool();
    this.engine = options.engine ?? DEFAULT_SIM_ENGINE;
    this.variation = options.variation ?? NO_CELL_VARIATION;
    this.physics = this.engine === "mujoco" ? new MujocoScene(this, limits) : null;
    this.physics?.load(this.nowNs);
  }

  /** Simulated time, ns since the world was created. */
  get tNs(): bigint {
    return this.nowNs;
  }

  /** The fingertip point and closing-axis yaw, from the true joint positions. */
  toolPose(): ToolPose {
    return this.tool;
  }

  /** True gripper opening 0..1. */
  opening(): number {
    return openingOf(this.embodiment, this.servos.positionRad);
  }

  holding(): boolean {
    if (this.physics) return this.physics.holding;
    return this.grasp.held !== null;
  }

  object(name: string): SimObject | undefined {
    return this.objects.find((o) => o.name === name);
  }

  /** Commands joint goals; joints outside the arm and gripper are held at home. */
  setGoals(positionRad: readonly number[]): void {
    const { dof, armJoints, gripperJoint } = this.embodiment;
    if (positionRad.length !== dof) throw new Error(`goal vector must have ${dof} entries (robot dof); got ${positionRad.length}`);
    for (let i = 0; i < dof; i++) {
      const driven = armJoints.includes(i) || i === gripperJoint;
      const value = positionRad[i];
      if (!Number.isFinite(value)) throw new Error(`goal for joint ${this.embodiment.jointNames[i]} must be a finite number; got ${value}`);
      this.servos.goalRad[i] = driven ? value : this.homeRad[i];
    }
  }

  setTorque(enabled: boolean): void {
    this.servos.torqueEnabled = enabled;
  }

  /** Steps physics in fixed substeps until tNs (a last partial substep lands exactly on it). */
  advanceTo(tNs: bigint): void {
    if (this.physics) {
      if (tNs <= this.nowNs) return;
      this.physics.advanceTo(tNs);
      this.nowNs = tNs;
      this.tool = this.computeTool();
      return;
    }
    while (this.nowNs < tNs) {
      const stepNs = tNs - this.nowNs < this.substepNs ? tNs - this.nowNs : this.substepNs;
      this.step(Number(stepNs) / 1e9);
      this.nowNs += stepNs;
    }
  }

  advanceBy(seconds: number): void {
    this.advanceTo(this.nowNs + BigInt(Math.round(seconds * 1e9)));
  }

  /**
   * Puts the scene into the plan: homes the arm (spending RESET_HOMING_S of simulated time), then
   * places the objects at the plan's poses with tiny settle noise and sets the lighting.
   */
  resetScene(plan: ResetPlan): { resetS: number } {
    this.startHoming(plan.homeRad);
    this.advanceBy(RESET_HOMING_S);
    this.placeScene(plan);
    return { resetS: RESET_HOMING_S };
  }

  /** First half of a reset: let go of anything held and drive the arm home (time must then pass). */
  startHoming(homeRad: readonly number[]): void {
    this.grasp.clear();
    if (homeRad.length === this.embodiment.dof) this.homeRad = [...homeRad];
    this.servos.goalRad.splice(0, this.homeRad.length, ...this.homeRad);
  }

  /** Second half of a reset: the arm settles exactly home, objects and lighting as planned. */
  placeScene(plan: ResetPlan): void {
    this.planSeed = deriveSeed(0, JSON.stringify([plan.objects, plan.distractors, plan.lighting]));
    this.placedNs = this.nowNs;
    this.sensorRandom = new SimRandom(this.planSeed, "sensors");
    this.pixelRandom = new SimRandom(this.planSeed, "pixels");
    this.physicsRandom = new SimRandom(this.planSeed, "physics");
    this.servos.place(this.homeRad);
    this.tool = this.computeTool();
    const noise = () => this.physicsRandom.symmetric(SETTLE_NOISE_M);
    const place = (name: string, kind: string, pos: readonly number[], yawRad: number, shape?: ResetPlan["objects"][string]["shape"]) => {
      // A kit brings its measured shape; the cell's own stock is cut to the cell's tolerance.
      const object = makeObject(name, kind, [pos[0] + noise(), pos[1] + noise(), 0], yawRad + noise(), shape ? shapeFromSpec(shape) : scaledShape(shapeOf(kind), this.variation.objectScale));
      object.positionM[2] = restZOf(object);
      return object;
    };
    this.objects = Object.entries(plan.objects).map(([name, o]) => place(name, o.object, o.positionM, o.yawRad, o.shape));
    const seen = new Map<string, number>();
    for (const d of plan.distractors) {
      const count = seen.get(d.object) ?? 0;
      seen.set(d.object, count + 1);
      this.objects.push(place(count === 0 ? d.object : `${d.object}#${count}`, d.object, d.positionM, d.yawRad));
    }
    this.lighting = plan.lighting;
    this.contactForceN.fill(0);
    this.physics?.load(this.nowNs);
  }

  /** A frozen copy of what a camera needs to render this instant (objects, gripper, lighting). */
  snapshot(): RenderScene {
    return {
      objects: this.objects.map((o) => ({ ...o, positionM: [...o.positionM] as [number, number, number] })),
      tool: this.tool,
      opening: this.opening(),
      arm: armOf(this.embodiment, this.servos.positionRad),
      lighting: this.lighting,
      noiseSeed: deriveSeed(this.planSeed, `pixels:${this.nowNs - this.placedNs}`) >>> 1,
    };
  }

  /** Simulated time of the last placement (0 before any): sensors that sample on a grid of their own start it there. */
  get placedAtNs(): bigint {
    return this.placedNs;
  }

  /**
   * A random stream for a sensor's draws at this instant, seeded by the placed scene and the time since its
   * placement (the replay seam above): the same draws for the same episode whatever the cell did before.
   */
  randomSincePlacement(label: string): SimRandom {
    return new SimRandom(this.planSeed, `${label}:${this.nowNs - this.placedNs}`);
  }

  /** Joint readings with encoder noise. */
  measuredJoints(): JointState {
    const s = this.servos;
    const noise = this.randomSincePlacement("joints");
    return {
      tNs: this.nowNs,
      positionRad: s.positionRad.map((p) => p + noise.gaussian(0.001)),
      velocityRadS: s.velocityRadS.map((v) => v + noise.gaussian(0.005)),
      currentA: s.currentA.map((c) => Math.max(0, c + noise.gaussian(0.005))),
      temperatureC: s.temperatureC.map((t) => Math.round(t * 10) / 10),
    };
  }

  /**
   * Ground-truth poses of every object and of the fingertip ("gripper"). A kit object is reported
   * under its initial-condition name and again under its kit name ("kit/<name>"), as a tracked
   * rigid body of the kit would be.
   */
  poses(): ObjectPose[] {
    const pose = (name: string, p: readonly number[], yawRad: number): ObjectPose => ({
      name,
      positionM: [p[0], p[1], p[2]],
      orientation: [0, 0, Math.sin(yawRad / 2), Math.cos(yawRad / 2)],
    });
    const aliases = this.objects.flatMap((o) => {
      const alias = kitAliasOf(o);
      return alias && !this.objects.some((other) => other.name === alias) ? [pose(alias, o.positionM, o.yawRad)] : [];
    });
    return [
      ...this.objects.map((o) => pose(o.name, o.positionM, o.yawRad)), ...aliases, pose("gripper", this.tool.positionM, this.tool.yawRad),
    ];
  }

  private computeTool(): ToolPose {
    return forwardKinematics(armOf(this.embodiment, this.servos.positionRad));
  }

  private step(dtS: number): void {
    const { armJoints, gripperJoint, gripperOpenValue } = this.embodiment;
    const servos = this.servos;
    const previousTool = this.tool;
    const previousOpening = this.opening();
    const previousPositions = [...servos.positionRad];

    // Loads: the shoulder and elbow carry the arm, the gripper squeezes what it holds.
    servos.loadA[armJoints[1]] = 0.15 + 0.02 * Math.hypot(...this.contactForceN);
    servos.loadA[armJoints[2]] = 0.1;
    servos.loadA[gripperJoint] = this.grasp.held ? 0.45 : 0;
    servos.step(dtS);

    const holdOpening = this.grasp.holdingOpening();
    if (holdOpening !== null && servos.positionRad[gripperJoint] < holdOpening * gripperOpenValue) {
      servos.positionRad[gripperJoint] = holdOpening * gripperOpenValue;
      servos.velocityRadS[gripperJoint] = 0;
    }

    let tool = this.computeTool();
    if (tool.positionM[2] < this.grasp.minToolZ()) {
      // The table stops the arm where it was; the wrist feels it.
      servos.revert(armJoints, previousPositions);
      tool = previousTool;
      this.contactForceN[2] = Math.max(this.contactForceN[2], 40);
      this.stats.tableHits++;
    } else if (this.grasp.landingOn({ tool, previousTool, opening: this.opening(), objects: this.objects })) {
      servos.revert(armJoints, previousPositions);
      tool = previousTool;
      this.contactForceN[2] = Math.max(this.contactForceN[2], 25);
      this.stats.landings++;
    }
    this.tool = tool;

    const alpha = Math.min(1, dtS / 0.015);
    const previousVelocity = [...this.velocityMS];
    for (let k = 0; k < 3; k++) {
      const raw = (tool.positionM[k] - previousTool.positionM[k]) / dtS;
      this.velocityMS[k] += (raw - this.velocityMS[k]) * alpha;
    }
    const accel = Math.hypot(...this.velocityMS.map((v, k) => (v - previousVelocity[k]) / dtS));
    this.accelMS2 += (accel - this.accelMS2) * alpha;

    const events = this.grasp.update({
      tool, previousTool, opening: this.opening(), previousOpening,
      speedMS: Math.hypot(...this.velocityMS), accelMS2: this.accelMS2, objects: this.objects,
    });
    if (events.attached) this.stats.attaches++;
    if (events.released === "slipped") this.stats.drops++;
    if (events.knocked.length > 0) this.stats.knocks++;

    const decay = Math.exp(-dtS / 0.05);
    for (let k = 0; k < 3; k++) this.contactForceN[k] = this.contactForceN[k] * decay + events.forceN[k] * (k === 2 ? 0 : 1);
    // Gravity of a held object is a steady load, not an impulse.
    if (this.grasp.held) this.contactForceN[2] = Math.min(this.contactForceN[2], -0.2);

    for (const object of this.objects) {
      if (object.attached) continue;
      const rest = restZOf(object);
      if (object.positionM[2] > rest) {
        object.fallSpeedMS += GRAVITY_MS2 * dtS;
        object.positionM[2] = Math.max(rest, object.positionM[2] - object.fallSpeedMS * dtS);
        if (object.positionM[2] === rest) object.fallSpeedMS = 0;
      }
    }
  }
}
