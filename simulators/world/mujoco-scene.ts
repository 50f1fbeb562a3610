/**
 * The MuJoCo engine behind SimWorld (engine "mujoco"): rigid bodies, contacts and friction from
 * MuJoCo 3.3.8 stepped with mj_step at a fixed 2 ms. SimWorld keeps its public state (servos,
 * objects, contactForceN, stats); this class drives the MuJoCo model from the servo goals and writes
 * the simulated state back after every step, so devices, renderer and policies see the same API.
 *
 * Servo behaviour: a real hobby servo runs its own motion profile and a stiff position loop. Here a
 * ServoJoints instance generates the same speed- and acceleration-limited reference the kinematic
 * world follows, and MuJoCo position actuators (stiffness, damping, torque limit) track it. Contact
 * can therefore stop the arm (the table, an object under a finger) and the torque limit decides how
 * hard it pushes; the arm links are gravity-compensated (gravcomp) as a servo's integral action would.
 *
 * Grasping is contact only: the parallel pads squeeze the object with the gripper's force limit and
 * friction holds it. `holding` is what a real gripper's controller can tell: both pads pressing on
 * the same object.
 *
 * Time: physics steps happen at fixed 2 ms boundaries of simulated time counted from the last
 * placement; reading the world between boundaries shows the last step (a sub-2 ms zero-order hold),
 * so a run is identical however the clock chunks `advanceTo`.
 */
import type { MjData, MjModel } from "mujoco-js";
import { compileMjcf, enumValue, mujoco } from "../physics/mujoco-module.js";
import {
  ARM_JOINT_NAMES, bodyNameOf, FINGER_JOINT_NAMES, MJCF_PARAMETERS, SENSOR_NAMES, sceneMjcf,
} from "../physics/mjcf.js";
import { armOf, type Embodiment } from "./embodiments.js";
import { FINGER_SPAN_PER_OPENING_M } from "./grasp.js";
import type { SimObject } from "./objects.js";
import { ServoJoints, type ServoLimits } from "./servo.js";

/** The part of SimWorld the engine reads (goals, torque) and writes (everything measured). */
export interface MujocoWorldState {
  readonly embodiment: Embodiment;
  readonly servos: ServoJoints;
  readonly objects: SimObject[];
  readonly contactForceN: [number, number, number];
  readonly stats: { attaches: number; drops: number; knocks: number; tableHits: number; landings: number };
}

/** Normal force each pad must press on the same object with for the gripper to report holding, N. */
export const HOLDING_PAD_FORCE_N = 0.3;
/** Wrist force/torque sensor low-pass time constant, seconds. */
const FT_FILTER_S = 0.02;
const AMBIENT_C = 28;
const THERMAL_TAU_S = 600;

interface Addresses {
  armQpos: number[];
  armDof: number[];
  fingerQpos: number;
  fingerDof: number;
  objectQpos: number[];
  objectBody: number[];
  gripperActuator: number;
  /** sensordata addresses. */
  sensors: { gripperNet: number; gripperTable: number; objects: Array<{ pads: [number, number]; gripper: number }> };
}

/** Frees the wasm-side mjData of scenes that were dropped without dispose(). */
const dataOfDroppedScenes = new FinalizationRegistry<MjData>((data) => data.delete());

/** Typed-array views of mjData. Each binding access costs ~10 us, so views are taken once per data. */
interface DataViews {
  qpos: Float64Array;
  qvel: Float64Array;
  ctrl: Float64Array;
  xpos: Float64Array;
  xquat: Float64Array;
  sensordata: Float64Array;
  actuatorForce: Float64Array;
}

export class MujocoScene {
  /** The motion profile the actuators track (a servo's internal trajectory generator). */
  private readonly reference: ServoJoints;
  private model: MjModel | undefined;
  private data: MjData | undefined;
  private at: Addresses | undefined;
  private physicsNs = 0n;
  private readonly stepNs = BigInt(Math.round(MJCF_PARAMETERS.timestepS * 1e9));
  private readonly actuationBit = enumValue(mujoco.mjtDisableBit.mjDSBL_ACTUATION);
  private cachedViews: DataViews | undefined;
  /** model.opt is a fresh wrapper per access; keep one per model. */
  private option: MjModel["opt"] | undefined;
  private holdingNow = false;
  /** Objects the gripper touched in the last substep; `touchingNext` is the set the next substep fills (swapped, not reallocated). */
  private touching = new Set<number>();
  private touchingNext = new Set<number>();
  private tableTouch = false;
  /** The wrist F/T filter's decay over one substep (the substep is fixed). */
  private readonly ftDecay = Math.exp(-MJCF_PARAMETERS.timestepS / FT_FILTER_S);

  constructor(private readonly world: MujocoWorldState, limits: ServoLimits[]) {
    this.reference = new ServoJoints(world.embodiment.dof, limits);
  }

  /** True when both pads press on the same object (the gripper's own holding signal). */
  get holding(): boolean {
    return this.holdingNow;
  }

  /**
   * (Re)builds the MuJoCo scene from the world's objects as placed and its servo positions (the arm
   * at rest), at simulated time nowNs. Objects keep their placed pose exactly.
   */
  load(nowNs: bigint): void {
    const { embodiment, servos, objects } = this.world;
    const model = compileMjcf(sceneMjcf(objects.map((o) => ({ name: o.name, kind: o.kind, shape: o.shape }))));
    if (model !== this.model) {
      this.releaseData();
      this.model = model;
      this.data = new mujoco.MjData(model);
      dataOfDroppedScenes.register(this, this.data, this);
      this.at = this.addresses(model, objects);
    } else {
      mujoco.mj_resetData(model, this.data!);
      this.at = this.addresses(model, objects);
    }
    const data = this.data!;
    const at = this.at!;
    this.cachedViews = undefined;
    this.option?.delete();
    this.option = model.opt;
    const { qpos, ctrl } = this.views();
    armOf(embodiment, servos.positionRad).forEach((q, k) => (qpos[at.armQpos[k]] = q));
    const fingerM = this.openingOf(servos.positionRad) * FINGER_SPAN_PER_OPENING_M;
    qpos[at.fingerQpos] = fingerM;
    qpos[at.fingerQpos + 1] = fingerM;
    objects.forEach((o, i) => {
      const a = at.objectQpos[i];
      qpos.set([o.positionM[0], o.positionM[1], o.positionM[2], Math.cos(o.yawRad / 2), 0, 0, Math.sin(o.yawRad / 2)], a);
    });
    armOf(embodiment, servos.positionRad).forEach((q, k) => (ctrl[k] = q));
    ctrl[at.gripperActuator] = fingerM;
    mujoco.mj_forward(model, data);
    this.reference.place(servos.positionRad);
    this.physicsNs = nowNs;
    this.holdingNow = false;
    this.touching.clear();
    this.tableTouch = false;
    this.world.contactForceN.fill(0);
  }

  /** mjData views, retaken when wasm memory growth has detached the old ones. */
  private views(): DataViews {
    const cached = this.cachedViews;
    if (cached && cached.qpos.length > 0) return cached;
    const d = this.data!;
    this.cachedViews = {
      qpos: d.qpos, qvel: d.qvel, ctrl: d.ctrl, xpos: d.xpos, xquat: d.xquat, sensordata: d.sensordata, actuatorForce: d.actuator_force,
    };
    return this.cachedViews;
  }

  /** Steps physics at every 2 ms boundary up to tNs. */
  advanceTo(tNs: bigint): void {
    if (!this.model) return;
    while (this.physicsNs + this.stepNs <= tNs) {
      this.step();
      this.physicsNs += this.stepNs;
    }
  }

  /** Frees the MuJoCo data (the compiled model stays cached for reuse). */
  dispose(): void {
    this.releaseData();
    this.model = undefined;
  }

  private releaseData(): void {
    this.option?.delete();
    this.option = undefined;
    this.cachedViews = undefined;
    dataOfDroppedScenes.unregister(this);
    this.data?.delete();
    this.data = undefined;
  }

  private openingOf(positionRad: readonly number[]): number {
    const { gripperJoint, gripperOpenValue } = this.world.embodiment;
    return Math.min(1, Math.max(0, (positionRad[gripperJoint] ?? 0) / gripperOpenValue));
  }

  private addresses(model: MjModel, objects: readonly SimObject[]): Addresses {
    const id = (type: unknown, name: string) => {
      const found = mujoco.mj_name2id(model, enumValue(type), name);
      if (found < 0) throw new Error(`generated MJCF lacks ${name}`);
      return found;
    };
    const { mjOBJ_JOINT, mjOBJ_BODY, mjOBJ_ACTUATOR } = mujoco.mjtObj;
    const jntQpos = model.jnt_qposadr as Int32Array;
    const jntDof = model.jnt_dofadr as Int32Array;
    const armJoints = ARM_JOINT_NAMES.map((name) => id(mjOBJ_JOINT, name));
    const finger = id(mjOBJ_JOINT, FINGER_JOINT_NAMES[0]);
    const objectBody = objects.map((o) => id(mjOBJ_BODY, bodyNameOf(o.name)));
    const bodyJoint = model.body_jntadr as Int32Array;
    const sensorAdr = model.sensor_adr as Int32Array;
    const sensor = (name: string) => sensorAdr[id(mujoco.mjtObj.mjOBJ_SENSOR, name)];
    return {
      armQpos: armJoints.map((j) => jntQpos[j]),
      armDof: armJoints.map((j) => jntDof[j]),
      fingerQpos: jntQpos[finger],
      fingerDof: jntDof[finger],
      objectQpos: objectBody.map((b) => jntQpos[bodyJoint[b]]),
      objectBody,
      sensors: {
        gripperNet: sensor(SENSOR_NAMES.gripperNet),
        gripperTable: sensor(SENSOR_NAMES.gripperTable),
        objects: objects.map((_, i) => ({
          pads: [sensor(SENSOR_NAMES.padObject(0, i)), sensor(SENSOR_NAMES.padObject(1, i))] as [number, number],
          gripper: sensor(SENSOR_NAMES.gripperObject(i)),
        })),
      },
      gripperActuator: id(mjOBJ_ACTUATOR, "act_gripper"),
    };
  }

  private step(): void {
    const model = this.model!;
    const data = this.data!;
    const at = this.at!;
    const views = this.views();
    const { embodiment, servos } = this.world;
    const { armJoints, gripperJoint, gripperOpenValue } = embodiment;
    const dtS = MJCF_PARAMETERS.timestepS;
    const reference = this.reference;

    if (servos.torqueEnabled) {
      reference.torqueEnabled = true;
      for (let i = 0; i < embodiment.dof; i++) reference.goalRad[i] = servos.goalRad[i];
      reference.step(dtS);
      this.setActuation(true);
      const ctrl = views.ctrl;
      for (let k = 0; k < armJoints.length; k++) ctrl[k] = reference.positionRad[armJoints[k]];
      ctrl[at.gripperActuator] = Math.min(1, Math.max(0, reference.positionRad[gripperJoint] / gripperOpenValue)) * FINGER_SPAN_PER_OPENING_M;
    } else {
      // Limp: no actuator force; the profile follows the arm so re-enabling does not jerk it.
      this.setActuation(false);
      reference.place(servos.positionRad);
    }
    mujoco.mj_step(model, data);

    // Stepping may grow wasm memory, which detaches views: take them again.
    const { qpos, qvel } = this.views();
    for (let k = 0; k < armJoints.length; k++) {
      const joint = armJoints[k];
      servos.positionRad[joint] = qpos[at.armQpos[k]];
      servos.velocityRadS[joint] = qvel[at.armDof[k]];
    }
    servos.positionRad[gripperJoint] = (qpos[at.fingerQpos] / FINGER_SPAN_PER_OPENING_M) * gripperOpenValue;
    servos.velocityRadS[gripperJoint] = (qvel[at.fingerDof] / FINGER_SPAN_PER_OPENING_M) * gripperOpenValue;
    this.updateMotorReadings(dtS);
    this.readObjects();
    this.readContacts();
  }

  /** Current follows actuator torque (plus an idle draw); the housing warms with I^2. */
  /** NOTE: the flag lives on the (shared, cached) model, so it is checked every step, not remembered. */
  private setActuation(on: boolean): void {
    const option = this.option!;
    const flags = option.disableflags;
    const wanted = on ? flags & ~this.actuationBit : flags | this.actuationBit;
    if (wanted !== flags) option.disableflags = wanted;
  }

  private updateMotorReadings(dtS: number): void {
    const { embodiment, servos } = this.world;
    const force = this.views().actuatorForce;
    const alpha = Math.min(1, dtS / 0.02);
    const armJoints = embodiment.armJoints;
    for (let k = 0; k < armJoints.length; k++) this.driveMotor(armJoints[k], force[k] / MJCF_PARAMETERS.armTorqueLimitNm, dtS, alpha);
    this.driveMotor(embodiment.gripperJoint, force[this.at!.gripperActuator] / MJCF_PARAMETERS.gripperForceLimitN, dtS, alpha);
  }

  private driveMotor(joint: number, share: number, dtS: number, alpha: number): void {
    const servos = this.world.servos;
    const current = servos.torqueEnabled ? 0.12 + 0.9 * Math.min(1, Math.abs(share)) : 0.01;
    servos.currentA[joint] += (current - servos.currentA[joint]) * alpha;
    servos.temperatureC[joint] += dtS * (0.12 * servos.currentA[joint] ** 2 - (servos.temperatureC[joint] - AMBIENT_C) / THERMAL_TAU_S);
  }

  private readObjects(): void {
    const { xpos, xquat } = this.views();
    const objects = this.world.objects;
    const bodies = this.at!.objectBody;
    for (let i = 0; i < objects.length; i++) {
      const object = objects[i];
      const b = bodies[i];
      object.positionM[0] = xpos[3 * b];
      object.positionM[1] = xpos[3 * b + 1];
      object.positionM[2] = xpos[3 * b + 2];
      const w = xquat[4 * b], x = xquat[4 * b + 1], y = xquat[4 * b + 2], z = xquat[4 * b + 3];
      object.yawRad = Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
      object.attached = false;
      object.fallSpeedMS = 0;
    }
  }

  /**
   * Reads the contact sensors: the force of the environment on the gripper (the wrist F/T, world
   * frame, filtered), whether both pads press on the same object (holding), and events for stats.
   */
  private readContacts(): void {
    const at = this.at!;
    const sensed = this.views().sensordata;
    const net = at.sensors.gripperNet;
    const decay = this.ftDecay;
    // The sensor gives the force the gripper exerts; the wrist feels the reaction.
    for (let k = 0; k < 3; k++) this.world.contactForceN[k] = this.world.contactForceN[k] * decay - sensed[net + 1 + k] * (1 - decay);

    // Hysteresis: a grip forms at HOLDING_PAD_FORCE_N on both pads and is lost below a third of it,
    // so force ripple while lifting does not flicker the signal.
    const threshold = this.holdingNow ? HOLDING_PAD_FORCE_N / 3 : HOLDING_PAD_FORCE_N;
    let holding = false;
    const touching = this.touchingNext;
    touching.clear();
    const objects = at.sensors.objects;
    for (let i = 0; i < objects.length; i++) {
      const o = objects[i];
      if (padForce(sensed, o.pads[0]) >= threshold && padForce(sensed, o.pads[1]) >= threshold) holding = true;
      if (sensed[o.gripper] > 0) touching.add(i);
    }
    const tableTouch = sensed[at.sensors.gripperTable] > 0;

    const stats = this.world.stats;
    if (holding && !this.holdingNow) stats.attaches++;
    if (!holding && this.holdingNow && this.openingOf(this.reference.goalRad) < 0.5) stats.drops++;
    if (!holding) for (const i of touching) if (!this.touching.has(i)) stats.knocks++;
    if (tableTouch && !this.tableTouch) stats.tableHits++;
    this.holdingNow = holding;
    this.touchingNext = this.touching;
    this.touching = touching;
    this.tableTouch = tableTouch;
  }
}

/** Magnitude of a force sensor's reading when it is in contact (its first value > 0), else 0. */
function padForce(sensed: Float64Array, adr: number): number {
  return sensed[adr] > 0 ? Math.hypot(sensed[adr + 1], sensed[adr + 2], sensed[adr + 3]) : 0;
}
