/**
 * The safety envelope (cell-agent/safety/envelope.ts): joint limits, the change per step, the
 * workspace box through the SO-101's forward kinematics, the stop rule, and its options.
 */
import assert from "node:assert/strict";
import { ARM_CHAINS, forwardKinematicsFor } from "../../cell-agent/safety/arm-kinematics.js";
import { SafetyEnvelope, clampEventDetail, compileSafetyEnvelopeOptions, type SafetyEnvelopeOptionsInput } from "../../cell-agent/safety/envelope.js";
import { ARM_GEOMETRY, forwardKinematics } from "../../simulators/world/kinematics.js";
import { mulberry32 } from "../../cell-agent/episode/prng.js";
import { parseCatalogSafety } from "../../cell-agent/safety/catalog-safety.js";
import { loadFirmwarePins, type RobotModel } from "../../firmware-pins/pins.js";

const SO101 = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];
const G1_LIKE = ["a", "b", "c"];

function envelope(input: SafetyEnvelopeOptionsInput, model = "so101", jointNames = SO101): SafetyEnvelope {
  return new SafetyEnvelope(compileSafetyEnvelopeOptions(input, { model, jointNames }));
}

describe("safety envelope", () => {
  it("limits the change per step from the measured position on the first step, then from the previous goal", () => {
    const env = envelope({ maxStepRad: 0.1, workspaceBoxM: null });
    const first = env.step([0.5, 0, 0, 0, 0, -0.05], [0, 0, 0, 0, 0, 0]);
    assert.deepEqual(first.commandRad, [0.1, 0, 0, 0, 0, -0.05]);
    assert.deepEqual(first.clamps, [{ kind: "max_step", joint: "shoulder_pan", requested: 0.5, applied: 0.1 }]);
    // The servo lags (measured still 0): the next goal is measured from the previous goal, 0.1.
    const second = env.step([0.5, 0, 0, 0, 0, -0.05], [0, 0, 0, 0, 0, 0]);
    assert.ok(Math.abs(second.commandRad[0] - 0.2) < 1e-12);
    // A gripper goal held beyond contact is not clamped once reached.
    const third = env.step([0.25, 0, 0, 0, 0, -0.05], [0.1, 0, 0, 0, 0, 0.3]);
    assert.deepEqual(third.clamps, []);
    assert.equal(env.clampCount, 2);
  });

  it("cannot limit a step without a reference (no goal yet, no reading), so the runner sends nothing then", () => {
    const env = envelope({ maxStepRad: 0.1, workspaceBoxM: null });
    assert.equal(env.canLimit(undefined), false);
    assert.equal(env.canLimit([0, 0, 0, 0, 0, 0]), true);
    env.step([0.05, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]);
    // Once a goal was sent it is the reference, whatever the reading.
    assert.equal(env.canLimit(undefined), true);
    env.restart();
    assert.equal(env.canLimit(undefined), false);
  });

  it("takes per-joint steps and joint limits, and starts again from the reading after a hold", () => {
    const env = envelope({ maxStepRad: { gripper: 1 }, jointLimitsRad: { wrist_roll: [-1, 1] }, workspaceBoxM: null });
    const step = env.step([0, 0, 0, 0, 3, 0.9], [0, 0, 0, 0, 0, 0]);
    assert.deepEqual(step.commandRad, [0, 0, 0, 0, 0.5, 0.9]);
    assert.deepEqual(step.clamps.map((c) => `${c.kind}:${c.joint}:${c.applied}`), ["joint_limit:wrist_roll:1", "max_step:wrist_roll:0.5"]);
    env.held([0, 0, 0, 0, 0.9, 0]);
    assert.deepEqual(env.step([0, 0, 0, 0, 1, 0], undefined).clamps.map((c) => c.kind), []);
  });

  it("shortens a step that would put the SO-101's fingertip through the table, and lets an arm outside come back", () => {
    const env = envelope({});
    // Straight up: fingertip at z = 0.45 m.
    const up = [0, 0, 0, 0, 0, 0];
    // Shoulder at 1.9 rad with the rest straight puts the fingertip below the table top.
    const fk = forwardKinematicsFor("so101", SO101)!;
    assert.ok(fk([0, 1.9, 0, 0, 0, 0])[2] < -0.005);
    const env2 = envelope({ maxStepRad: 3 });
    const step = env2.step([0, 1.9, 0, 0, 0, 0], up);
    assert.equal(step.clamps.length, 1);
    assert.equal(step.clamps[0].kind, "workspace");
    const tip = fk(step.commandRad);
    assert.ok(tip[2] >= -0.005 - 1e-6 && tip[2] < 0.0, `fingertip z ${tip[2]}`);
    // From below the floor, a move further down is refused and a move up passes.
    const below = [0, 1.9, 0, 0, 0, 0];
    const env3 = envelope({ maxStepRad: 3 });
    env3.held(below);
    assert.deepEqual(env3.step([0, 1.95, 0, 0, 0, 0]).commandRad.map((v) => Number(v.toFixed(9))), below);
    assert.deepEqual(env3.step([0, 1.5, 0, 0, 0, 0]).clamps, []);
    assert.equal(env.options.workspaceBoxM?.minM[2], -0.005, "so101 has a default box");
  });

  it("agrees with the simulated SO-101's kinematics", () => {
    assert.deepEqual(
      { base: ARM_CHAINS.so101.baseHeightM, upper: ARM_CHAINS.so101.upperArmM, fore: ARM_CHAINS.so101.forearmM, tip: ARM_CHAINS.so101.wristToFingertipM },
      { base: ARM_GEOMETRY.baseHeightM, upper: ARM_GEOMETRY.upperArmM, fore: ARM_GEOMETRY.forearmM, tip: ARM_GEOMETRY.wristToFingertipM },
    );
    const fk = forwardKinematicsFor("so101", SO101)!;
    const random = mulberry32(7);
    for (let k = 0; k < 200; k++) {
      const q = SO101.map(() => (random() - 0.5) * 5);
      const mine = fk(q);
      const sim = forwardKinematics(q.slice(0, 5)).positionM;
      mine.forEach((v, i) => assert.ok(Math.abs(v - sim[i]) < 1e-12, `${q}: ${mine} vs ${sim}`));
    }
    assert.equal(forwardKinematicsFor("g1", G1_LIKE), undefined);
  });

  it("stops after 10 clamped steps in a row by default, and not before", () => {
    const env = envelope({ workspaceBoxM: null });
    const zero = [0, 0, 0, 0, 0, 0];
    for (let k = 1; k <= 10; k++) {
      const target = k % 2 ? [2, 0, 0, 0, 0, 0] : [-2, 0, 0, 0, 0, 0];
      const step = env.step(target, zero);
      assert.equal(step.stop !== undefined, k === 10, `step ${k}: ${step.stop}`);
      if (step.stop) assert.match(step.stop, /10 control steps in a row \(limit 10\)/);
    }
  });

  it("stops on clamped steps within the window even when they are not consecutive", () => {
    const env = envelope({ workspaceBoxM: null, consecutiveClampLimit: 5, windowClampLimit: 4, windowSteps: 10 });
    const results: boolean[] = [];
    let goal = 0;
    for (let k = 0; k < 8; k++) {
      // Every other step jumps by 1 rad (clamped to 0.5); the others stay put.
      if (k % 2 === 0) goal += 1;
      const step = env.step([goal, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]);
      results.push(step.stop !== undefined);
      if (step.stop) break;
    }
    assert.equal(results.indexOf(true), results.length - 1);
    assert.ok(results.length <= 8);
  });

  it("forgets clamped steps that left the window", () => {
    const env = envelope({ workspaceBoxM: null, consecutiveClampLimit: 5, windowClampLimit: 2, windowSteps: 4 });
    let goal = [0, 0, 0, 0, 0, 0];
    for (let k = 0; k < 40; k++) {
      // One clamped step in four (a 1 rad jump, clamped to 0.5): never 2 in any window of 4.
      const target = k % 4 === 0 ? [goal[0] + 1, 0, 0, 0, 0, 0] : goal;
      const step = env.step(target, [0, 0, 0, 0, 0, 0]);
      assert.equal(step.clamps.length, k % 4 === 0 ? 1 : 0, `step ${k}`);
      assert.equal(step.stop, undefined, `step ${k}`);
      goal = step.commandRad;
    }
  });

  it("rejects bad options in words, quoting the value", () => {
    const compile = (input: object, model = "so101", joints = SO101) => () => compileSafetyEnvelopeOptions(input as SafetyEnvelopeOptionsInput, { model, jointNames: joints });
    assert.throws(compile({ maxStep: 1 }), /unknown safety envelope option "maxStep"/);
    assert.throws(compile({ maxStepRad: -1 }), /maxStepRad must be a positive number; got -1/);
    assert.throws(compile({ maxStepRad: { elbow: 1 } }), /names joint\(s\) "elbow", which this robot lacks/);
    assert.throws(compile({ jointLimitsRad: { gripper: [1, 0] } }), /jointLimitsRad.gripper must be \[min, max\] with min <= max; got \[1,0\]/);
    assert.throws(compile({ workspaceBoxM: { minM: [0, 0, 0], maxM: [1, 1, 1] } }, "g1", G1_LIKE), /needs the robot's kinematics.*remove it for "g1"/);
    assert.throws(compile({ workspaceBoxM: { minM: [0, 0, 1], maxM: [1, 1, 1] } }), /minM must be below maxM/);
    assert.throws(compile({ windowClampLimit: 200 }), /cannot exceed windowSteps/);
    assert.equal(compileSafetyEnvelopeOptions({}, { model: "g1", jointNames: G1_LIKE }).workspaceBoxM, null, "no box without kinematics");
  });

  it("describes the clamps of a step as bounded JSON", () => {
    const detail = JSON.parse(clampEventDetail(new Array(20).fill({ kind: "max_step", joint: "gripper", requested: 1.234567, applied: 0.5 })));
    assert.equal(detail.length, 8);
    assert.deepEqual(detail[0], { kind: "max_step", joint: "gripper", requested: 1.2346, applied: 0.5 });
  });

  it("takes each model's defaults from the robot catalogue: so101's unchanged, aloha's per joint, the config overriding joint by joint", () => {
    const so101 = compileSafetyEnvelopeOptions({}, { model: "so101", jointNames: SO101 });
    assert.deepEqual(so101.maxStepRad, [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
    assert.deepEqual(so101.workspaceBoxM, { minM: [-0.45, -0.45, -0.005], maxM: [0.45, 0.45, 0.5] });
    assert.ok(so101.jointLimitsRad.every(([min, max]) => min === -Infinity && max === Infinity), "so101: the bus clamps to its calibrated range");
    const aloha = loadFirmwarePins().models.find((m) => m.id === "aloha")!.joints;
    const env = compileSafetyEnvelopeOptions({ maxStepRad: { left_waist: 0.1 }, jointLimitsRad: { right_gripper: [0, 1] } }, { model: "aloha", jointNames: aloha });
    assert.equal(env.maxStepRad[aloha.indexOf("left_waist")], 0.1, "the config's value for the joint it names");
    assert.equal(env.maxStepRad[aloha.indexOf("left_elbow")], 0.35, "the catalogue's for the others");
    assert.equal(env.maxStepRad[aloha.indexOf("left_gripper")], 0.5);
    assert.deepEqual(env.jointLimitsRad[aloha.indexOf("left_shoulder")], [-1.85, 1.25]);
    assert.deepEqual(env.jointLimitsRad[aloha.indexOf("right_gripper")], [0, 1]);
    assert.equal(env.workspaceBoxM, null, "no kinematics for aloha, so no box");
    assert.equal(compileSafetyEnvelopeOptions({ maxStepRad: 0.2 }, { model: "aloha", jointNames: aloha }).maxStepRad.every((v) => v === 0.2), true, "one number replaces every joint's");
  });

  it("checks a catalogue safety section, naming the model and key", () => {
    const model = (safety: unknown): RobotModel => ({ id: "arm9", class: "arm-pod", dof: 2, hands: "h", tier: "soak", firmwares: ["1"], joints: ["a", "b"], safety } as RobotModel);
    assert.deepEqual(parseCatalogSafety(model(undefined)), { envelope: {}, effortLimitPercent: null });
    assert.deepEqual(parseCatalogSafety(model({ maxStepRad: { a: 0.2 }, effortLimitPercent: 60 })), { envelope: { maxStepRad: { a: 0.2 } }, effortLimitPercent: 60 });
    assert.throws(() => parseCatalogSafety(model({ maxStep: 1 })), /model "arm9" safety: unknown key "maxStep"/);
    assert.throws(() => parseCatalogSafety(model({ maxStepRad: { c: 1 } })), /safety.maxStepRad names joint\(s\) c, which arm9 lacks/);
    assert.throws(() => parseCatalogSafety(model({ jointLimitsRad: { a: [1, 1] } })), /jointLimitsRad.a must be \[min, max\] with min < max; got \[1,1\]/);
    assert.throws(() => parseCatalogSafety(model({ effortLimitPercent: 150 })), /effortLimitPercent must be a number in \(0, 100\] or null; got 150/);
    for (const m of loadFirmwarePins().models) parseCatalogSafety(m);
  });
});
