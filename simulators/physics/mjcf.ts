/**
 * MJCF for the simulated tabletop: a table plane, the one simulated arm (the chain of
 * world/kinematics.ts: base yaw, shoulder, elbow and wrist pitch, wrist roll) ending in a parallel
 * gripper, and one free body per object. The MJCF depends only on the object kinds in the scene,
 * not on where they are: poses go into qpos, so a layout compiles once and is reused.
 *
 * Gripper: two finger pads (5 mm half thickness, matching the kinematic world's 5 mm finger rods)
 * on slide joints along the closing axis, 8 mm + 19 mm x opening from the fingertip point (a 44 mm jaw),
 * coupled by a joint equality (a parallel gripper's linkage) and driven by one position actuator
 * whose force limit is the grip force. Grasping is friction between pads and object, nothing else.
 */
import { ARM_GEOMETRY, ARM_JOINT_LIMIT_RAD } from "../world/kinematics.js";
import { FINGER_BASE_OFFSET_M, FINGER_RADIUS_M, FINGER_SPAN_PER_OPENING_M } from "../world/grasp.js";
import { shapeOf, type ObjectShape } from "../world/objects.js";

const FINGER_HALF_WIDTH_M = 0.009;
const FINGER_HALF_LENGTH_M = 0.02;

/** Physical constants of the model; documented in docs/simulation.md. */
export const MJCF_PARAMETERS = {
  timestepS: 0.002,
  /** Arm position actuators: stiffness Nm/rad, damping Nm s/rad, torque limit Nm (an STS3215 stalls near 3 Nm). */
  armKp: 40,
  armKv: 1.2,
  armTorqueLimitNm: 3,
  /** Gripper: stiffness N/m on the finger slide, grip force limit N. */
  gripperKp: 400,
  gripperForceLimitN: 6,
  /** Pad friction: sliding, torsional, rolling. */
  padFriction: [1.2, 0.02, 0.0005],
  objectFriction: [0.9, 0.01, 0.0005],
  /** Stiffer-than-default contacts (time constant 4 ms = 2 steps) so a 5 N squeeze on a 20 g cube sinks < 1 mm. */
  contactSolref: [0.004, 1],
  contactSolimp: [0.95, 0.99, 0.001],
} as const;

/** Mass of each object kind, kilograms (unknown kinds: 50 g). */
const MASS_KG: Record<string, number> = {
  cube: 0.02, "block-blue": 0.02, "block-green": 0.02, "block-yellow": 0.02,
  mug: 0.3, stapler: 0.25, tape: 0.08, cup: 0.03,
};

export function massKgOf(kind: string): number {
  return MASS_KG[kind] ?? 0.05;
}

export interface MjcfObject {
  /** Body name in the model (the world's object name). */
  name: string;
  kind: string;
  /** The object's own shape (a kit's box and mass); default the kind's shape and mass. */
  shape?: ObjectShape;
}

const f = (values: readonly number[]) => values.map((v) => Number(v.toFixed(6))).join(" ");
const rgba = (shape: ObjectShape) => `${f(shape.colour.map((c) => c / 255))} 1`;
/** XML attribute-safe body name. */
export const bodyNameOf = (objectName: string) => `obj_${objectName.replace(/[^A-Za-z0-9_-]/g, "_")}`;

function objectBody(object: MjcfObject): string {
  const shape = object.shape ?? shapeOf(object.kind);
  const geom = shape.footprint === "disc"
    ? `type="cylinder" size="${f([shape.halfXM, shape.heightM / 2])}"`
    : `type="box" size="${f([shape.halfXM, shape.halfYM, shape.heightM / 2])}"`;
  return `
    <body name="${bodyNameOf(object.name)}" pos="0 0 ${f([shape.heightM / 2])}">
      <freejoint/>
      <geom class="object" ${geom} mass="${f([shape.massKg ?? massKgOf(object.kind)])}" rgba="${rgba(shape)}"/>
    </body>`;
}

/** The arm's joint names in the model, in arm-vector order. */
export const ARM_JOINT_NAMES = ["yaw", "shoulder", "elbow", "wrist_pitch", "wrist_roll"] as const;
export const FINGER_JOINT_NAMES = ["finger_a", "finger_b"] as const;
export const PAD_GEOM_NAMES = ["pad_a", "pad_b"] as const;
export const GRIPPER_GEOM_NAMES = ["pad_a", "pad_b", "palm"] as const;

/**
 * Contact sensors (computed inside MuJoCo, cheaper than walking mjData.contact from JavaScript).
 * Each "found force" sensor with reduce="netforce" gives 4 numbers: the contact count and the net
 * force, world frame, exerted by side 1 on side 2.
 */
export const SENSOR_NAMES = {
  /** The gripper (hand subtree) against anything. */
  gripperNet: "gripper_net",
  gripperTable: "gripper_table",
  /** Per object index i: each pad against it, and the gripper against it. */
  padObject: (pad: 0 | 1, i: number) => `pad${pad}_obj${i}`,
  gripperObject: (i: number) => `gripper_obj${i}`,
} as const;

function sensors(objects: readonly MjcfObject[]): string {
  const lines = [
    `<contact name="${SENSOR_NAMES.gripperNet}" subtree1="hand" data="found force" reduce="netforce"/>`,
    `<contact name="${SENSOR_NAMES.gripperTable}" subtree1="hand" geom2="table" data="found"/>`,
  ];
  objects.forEach((o, i) => {
    const body = bodyNameOf(o.name);
    for (const pad of [0, 1] as const) {
      lines.push(`<contact name="${SENSOR_NAMES.padObject(pad, i)}" geom1="${PAD_GEOM_NAMES[pad]}" body2="${body}" data="found force" reduce="netforce"/>`);
    }
    lines.push(`<contact name="${SENSOR_NAMES.gripperObject(i)}" subtree1="hand" body2="${body}" data="found"/>`);
  });
  return lines.map((l) => `    ${l}`).join("\n");
}

/** The whole scene's MJCF for these objects. */
export function sceneMjcf(objects: readonly MjcfObject[]): string {
  const { baseHeightM, upperArmM, forearmM, wristToFingertipM } = ARM_GEOMETRY;
  const p = MJCF_PARAMETERS;
  const limit = `range="${-ARM_JOINT_LIMIT_RAD} ${ARM_JOINT_LIMIT_RAD}"`;
  const padZ = wristToFingertipM - FINGER_HALF_LENGTH_M;
  const palmZ = wristToFingertipM - 2 * FINGER_HALF_LENGTH_M - 0.005;
  const padSize = f([FINGER_RADIUS_M, FINGER_HALF_WIDTH_M, FINGER_HALF_LENGTH_M]);
  const stroke = FINGER_SPAN_PER_OPENING_M;
  return `<mujoco model="assay-tabletop">
  <compiler angle="radian" autolimits="true"/>
  <option timestep="${p.timestepS}" integrator="implicitfast" cone="elliptic" impratio="10"/>
  <default>
    <joint armature="0.005" damping="0.05"/>
    <geom contype="0" conaffinity="0" density="0"/>
    <default class="link"><geom type="capsule" size="0.018" mass="0.1" rgba="0.19 0.19 0.21 1"/></default>
    <default class="object"><geom contype="1" conaffinity="1" condim="4" solref="${p.contactSolref.join(" ")}" solimp="${p.contactSolimp.join(" ")}" friction="${f(p.objectFriction)}"/></default>
    <default class="pad"><geom contype="1" conaffinity="1" condim="4" solref="${p.contactSolref.join(" ")}" solimp="${p.contactSolimp.join(" ")}" friction="${f(p.padFriction)}" mass="0.02" rgba="0.19 0.19 0.21 1"/></default>
    <position kp="${p.armKp}" kv="${p.armKv}" forcerange="${-p.armTorqueLimitNm} ${p.armTorqueLimitNm}"/>
  </default>
  <worldbody>
    <light pos="0.2 0 1" dir="0 0 -1"/>
    <geom name="table" type="plane" size="1 1 0.05" contype="1" conaffinity="1" condim="3" friction="0.8 0.01 0.0005" rgba="0.56 0.56 0.54 1"/>
    <geom name="base" type="cylinder" size="0.04 ${f([baseHeightM / 2])}" pos="0 0 ${f([baseHeightM / 2])}" rgba="0.19 0.19 0.21 1"/>
    <body name="turntable" gravcomp="1">
      <joint name="yaw" axis="0 0 1" ${limit}/>
      <geom class="link" fromto="0 0 0 0 0 ${baseHeightM}"/>
      <body name="upper_arm" pos="0 0 ${baseHeightM}" gravcomp="1">
        <joint name="shoulder" axis="0 1 0" ${limit}/>
        <geom class="link" fromto="0 0 0 0 0 ${upperArmM}"/>
        <body name="forearm" pos="0 0 ${upperArmM}" gravcomp="1">
          <joint name="elbow" axis="0 1 0" ${limit}/>
          <geom class="link" fromto="0 0 0 0 0 ${forearmM}"/>
          <body name="wrist" pos="0 0 ${forearmM}" gravcomp="1">
            <joint name="wrist_pitch" axis="0 1 0" ${limit}/>
            <geom class="link" type="sphere" size="0.02" mass="0.05"/>
            <body name="hand" gravcomp="1">
              <!-- Roll about the link; the local -z axis is world +z when the tool points down,
                   so tool yaw = base yaw + roll as in kinematics.ts. -->
              <joint name="wrist_roll" axis="0 0 -1" ${limit}/>
              <geom class="link" fromto="0 0 0 0 0 ${f([palmZ - 0.005])}" size="0.014"/>
              <geom name="palm" type="box" size="${f([FINGER_BASE_OFFSET_M + stroke + 0.01, 0.012, 0.005])}" pos="0 0 ${f([palmZ])}"
                    contype="1" conaffinity="1" condim="3" mass="0.05" rgba="0.19 0.19 0.21 1"/>
              <site name="tip" pos="0 0 ${wristToFingertipM}"/>
              <body name="finger_a_body" pos="${FINGER_BASE_OFFSET_M} 0 ${f([padZ])}" gravcomp="1">
                <joint name="finger_a" type="slide" axis="1 0 0" range="0 ${stroke}" damping="2" armature="0.01"/>
                <geom name="pad_a" class="pad" type="box" size="${padSize}"/>
              </body>
              <body name="finger_b_body" pos="${-FINGER_BASE_OFFSET_M} 0 ${f([padZ])}" gravcomp="1">
                <joint name="finger_b" type="slide" axis="-1 0 0" range="0 ${stroke}" damping="2" armature="0.01"/>
                <geom name="pad_b" class="pad" type="box" size="${padSize}"/>
              </body>
            </body>
          </body>
        </body>
      </body>
    </body>${objects.map(objectBody).join("")}
  </worldbody>
  <equality>
    <joint joint1="finger_b" joint2="finger_a"/>
  </equality>
  <actuator>
${ARM_JOINT_NAMES.map((j) => `    <position name="act_${j}" joint="${j}"/>`).join("\n")}
    <position name="act_gripper" joint="finger_a" kp="${p.gripperKp}" kv="4" forcerange="${-p.gripperForceLimitN} ${p.gripperForceLimitN}" ctrlrange="0 ${stroke}"/>
  </actuator>
  <sensor>
${sensors(objects)}
  </sensor>
</mujoco>
`;
}
