/**
 * Known answers for LeRobot's SO-101 units. Every expected value below is derived by hand from
 * huggingface/lerobot's source (snapshot 7427f3180):
 *  - src/lerobot/motors/motors_bus.py `MotorsBus._normalize` (ticks -> units) and `_unnormalize`
 *    (units -> ticks): RANGE_M100_100 `((v - min) / (max - min)) * 200 - 100`, negated when
 *    drive_mode; RANGE_0_100 `((v - min) / (max - min)) * 100`, `100 - norm` when drive_mode;
 *    both clamp to [min, max] on the way in and to [-100, 100] / [0, 100] on the way out;
 *    DEGREES `(v - mid) * 360 / max_res` with mid = (min + max) / 2 and max_res = 4096 - 1, neither
 *    clamped nor inverted; goals are `int(...)`, truncation toward zero.
 *  - src/lerobot/motors/feetech/tables.py: MODEL_RESOLUTION["sts3215"] = 4096; sign bit 11 for
 *    Homing_Offset, 15 for positions.
 *  - src/lerobot/motors/encoding_utils.py `encode_sign_magnitude` / `decode_sign_magnitude`.
 *  - src/lerobot/robots/so_follower/so_follower.py `SOFollower.__init__`: body joints DEGREES when
 *    `use_degrees` else RANGE_M100_100, gripper RANGE_0_100.
 */
import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeSignMagnitude, encodeSignMagnitude } from "../../cell-agent/devices/servo/feetech-protocol.js";
import { LerobotMotorCalibration, loadLerobotCalibration, parseLerobotCalibration } from "../../cell-agent/devices/servo/lerobot-calibration.js";
import { LEROBOT_FILE } from "../support/lerobot-calibration-file.js";
import { lerobotNormalize, lerobotUnnormalize, So101LerobotUnits, so101NormModes } from "../../cell-agent/devices/servo/lerobot-units.js";

const motor = (range_min: number, range_max: number, drive_mode = 0): LerobotMotorCalibration => ({ id: 1, drive_mode, homing_offset: 0, range_min, range_max });


describe("LeRobot SO-101 units (known answers from LeRobot's source)", () => {
  describe("RANGE_M100_100 (use_degrees false)", () => {
    it("normalizes ticks: the middle of the range is 0, the ends are -100 and 100", () => {
      // min 758, max 3292: (2025 - 758) / 2534 = 0.5 -> 0.5 * 200 - 100 = 0.
      assert.equal(lerobotNormalize(motor(758, 3292), "range_m100_100", 2025), 0);
      assert.equal(lerobotNormalize(motor(758, 3292), "range_m100_100", 758), -100);
      assert.equal(lerobotNormalize(motor(758, 3292), "range_m100_100", 3292), 100);
      // 1391: 633 / 2534 * 200 - 100 = -50.03946329913181 (IEEE double, as Python computes it).
      assert.equal(lerobotNormalize(motor(758, 3292), "range_m100_100", 1391), -50.03946329913181);
    });
    it("clamps ticks outside the range before normalizing", () => {
      // bounded_val = min(max_, max(min_, 500)) = 758 -> -100.
      assert.equal(lerobotNormalize(motor(758, 3292), "range_m100_100", 500), -100);
      assert.equal(lerobotNormalize(motor(758, 3292), "range_m100_100", 4000), 100);
    });
    it("negates for drive_mode 1", () => {
      // min 1000, max 3000: (1500 - 1000) / 2000 * 200 - 100 = -50; drive_mode -> 50.
      assert.equal(lerobotNormalize(motor(1000, 3000), "range_m100_100", 1500), -50);
      assert.equal(lerobotNormalize(motor(1000, 3000, 1), "range_m100_100", 1500), 50);
    });
    it("unnormalizes with int() truncation, clamping to [-100, 100] after the drive-mode negation", () => {
      // (-50 + 100) / 200 * 2000 + 1000 = 1500.
      assert.equal(lerobotUnnormalize(motor(1000, 3000), "range_m100_100", -50), 1500);
      // (33.3 + 100) / 200 * 2000 + 1000 = 2333.0 in doubles -> 2333.
      assert.equal(lerobotUnnormalize(motor(1000, 3000), "range_m100_100", 33.3), 2333);
      // 33.35: 133.35 / 200 * 2000 + 1000 = 2333.5 -> int() = 2333 (not rounded to 2334).
      assert.equal(lerobotUnnormalize(motor(1000, 3000), "range_m100_100", 33.35), 2333);
      // drive_mode 1: 150 -> -150 -> clamped -100 -> min 1000.
      assert.equal(lerobotUnnormalize(motor(1000, 3000, 1), "range_m100_100", 150), 1000);
      // drive_mode 1: -50 -> 50 -> 150 / 200 * 2000 + 1000 = 2500.
      assert.equal(lerobotUnnormalize(motor(1000, 3000, 1), "range_m100_100", -50), 2500);
      assert.equal(lerobotUnnormalize(motor(1000, 3000), "range_m100_100", 1e9), 3000);
    });
  });

  describe("RANGE_0_100 (the gripper)", () => {
    it("normalizes ticks, 100 - norm for drive_mode 1, clamped to the range", () => {
      // min 2000, max 3400: (2350 - 2000) / 1400 * 100 = 25; drive_mode -> 100 - 25 = 75.
      assert.equal(lerobotNormalize(motor(2000, 3400), "range_0_100", 2350), 25);
      assert.equal(lerobotNormalize(motor(2000, 3400, 1), "range_0_100", 2350), 75);
      assert.equal(lerobotNormalize(motor(2000, 3400), "range_0_100", 1200), 0);
    });
    it("unnormalizes, inverting before the [0, 100] clamp", () => {
      // 25 / 100 * 1400 + 2000 = 2350; drive_mode: 100 - 25 = 75 -> 0.75 * 1400 + 2000 = 3050.
      assert.equal(lerobotUnnormalize(motor(2000, 3400), "range_0_100", 25), 2350);
      assert.equal(lerobotUnnormalize(motor(2000, 3400, 1), "range_0_100", 25), 3050);
      assert.equal(lerobotUnnormalize(motor(2000, 3400), "range_0_100", 120), 3400);
      assert.equal(lerobotUnnormalize(motor(2000, 3400), "range_0_100", -5), 2000);
      // drive_mode 1: 120 -> 100 - 120 = -20 -> clamped 0 -> 2000.
      assert.equal(lerobotUnnormalize(motor(2000, 3400, 1), "range_0_100", 120), 2000);
    });
  });

  describe("DEGREES (use_degrees true, LeRobot's default)", () => {
    it("normalizes around the middle of the range over 4095 ticks per turn, unclamped, drive_mode ignored", () => {
      // mid = (758 + 3292) / 2 = 2025: 2025 -> 0; 3048 -> 1023 * 360 / 4095 = 89.93406593406593.
      assert.equal(lerobotNormalize(motor(758, 3292), "degrees", 2025), 0);
      assert.equal(lerobotNormalize(motor(758, 3292), "degrees", 3048), 89.93406593406593);
      // 4000 is past range_max and is NOT clamped: 1975 * 360 / 4095 = 173.62637362637363.
      assert.equal(lerobotNormalize(motor(758, 3292), "degrees", 4000), 173.62637362637363);
      assert.equal(lerobotNormalize(motor(758, 3292, 1), "degrees", 3048), 89.93406593406593);
    });
    it("unnormalizes with int() truncation toward zero", () => {
      // 90 * 4095 / 360 + 2025 = 1023.75 + 2025 = 3048.75 -> 3048.
      assert.equal(lerobotUnnormalize(motor(758, 3292), "degrees", 90), 3048);
      // -90: -1023.75 + 2025 = 1001.25 -> 1001.
      assert.equal(lerobotUnnormalize(motor(758, 3292), "degrees", -90), 1001);
      // -201: -2286.375 + 2025 = -261.375 -> int() = -261 (toward zero, where floor would give -262).
      assert.equal(lerobotUnnormalize(motor(758, 3292), "degrees", -201), -261);
      // An odd span: mid = (1000 + 3001) / 2 = 2000.5; 0 degrees -> int(2000.5) = 2000.
      assert.equal(lerobotUnnormalize(motor(1000, 3001), "degrees", 0), 2000);
    });
  });

  it("refuses a calibration whose min equals its max, as LeRobot does", () => {
    assert.throws(() => lerobotNormalize(motor(2000, 2000), "range_0_100", 2000), /min and max are equal/);
    assert.throws(() => lerobotUnnormalize(motor(2000, 2000), "degrees", 0), /min and max are equal/);
  });

  it("Feetech sign-magnitude (the driver's codec): Homing_Offset with sign bit 11, positions bit 15", () => {
    // -1470: bit 11 set | 1470 = 2048 + 1470 = 3518 (0x0DBE).
    assert.equal(encodeSignMagnitude(-1470, 11), 3518);
    assert.equal(decodeSignMagnitude(3518, 11), -1470);
    assert.equal(encodeSignMagnitude(2047, 11), 2047);
    assert.equal(decodeSignMagnitude(0x8105, 15), -261);
    assert.throws(() => encodeSignMagnitude(2048, 11), /\|2048\| > 2047/);
  });

  it("an SO-101 follower: body joints in degrees or -100..100, the gripper 0..100", () => {
    assert.deepEqual(so101NormModes(true), ["degrees", "degrees", "degrees", "degrees", "degrees", "range_0_100"]);
    assert.deepEqual(so101NormModes(false), ["range_m100_100", "range_m100_100", "range_m100_100", "range_m100_100", "range_m100_100", "range_0_100"]);
    const calibration = parseLerobotCalibration(LEROBOT_FILE);
    const degrees = new So101LerobotUnits(calibration, true);
    // pan mid 2025 -> 0; lift mid 2000 -> 0; elbow mid 2000.5: 2000 -> -0.5 * 360 / 4095; wrist_flex mid 2020;
    // wrist_roll mid 2047.5: 2047 -> -0.5 * 360 / 4095; gripper (2700 - 2000) / 1400 * 100 = 50.
    assert.deepEqual(degrees.fromTicks([2025, 2000, 2000, 2020, 2047, 2700]), [0, 0, -180 / 4095, 0, -180 / 4095, 50]);
    // 90 deg on each body joint: + 1023.75 ticks, truncated; gripper 25 -> 2350.
    assert.deepEqual(degrees.toTicks([90, 90, 90, 90, 90, 25]), [3048, 3023, 3024, 3043, 3071, 2350]);
    const range = new So101LerobotUnits(calibration, false);
    // lift: 0 -> (100 / 200) * 2000 + 1000 = 2000; pan: 100 -> 3292.
    assert.deepEqual(range.toTicks([100, 0, -100, 0, 0, 100]), [3292, 2000, 1000, 2020, 2047, 3400]);
    assert.throws(() => range.toTicks([0, 0]), /takes 6 values/);
  });
});

describe("LeRobot calibration file", () => {
  it("reads the file LeRobot writes", () => {
    const dir = mkdtempSync(join(tmpdir(), "lerobot-cal-"));
    const path = join(dir, "my_follower.json");
    writeFileSync(path, JSON.stringify(LEROBOT_FILE, null, 4));
    assert.deepEqual(loadLerobotCalibration(path), LEROBOT_FILE);
  });
  it("names the offending field in plain words", () => {
    const bad = (patch: Record<string, unknown>) => () => parseLerobotCalibration({ ...LEROBOT_FILE, ...patch }, "f.json");
    assert.throws(bad({ gripper: { ...LEROBOT_FILE.gripper, range_min: "2000" } }), /f\.json: gripper\.range_min must be an integer; got "2000"/);
    assert.throws(bad({ gripper: { ...LEROBOT_FILE.gripper, range_min: 3400 } }), /gripper: range_min \(3400\) must be below range_max \(3400\)/);
    assert.throws(bad({ wrist_roll: { ...LEROBOT_FILE.wrist_roll, drive_mode: 2 } }), /wrist_roll\.drive_mode must be 0 \(normal\) or 1 \(inverted\); got 2/);
    assert.throws(bad({ elbow_flex: { ...LEROBOT_FILE.elbow_flex, id: 9 } }), /elbow_flex\.id must be 3/);
    assert.throws(bad({ shoulder_pan: { ...LEROBOT_FILE.shoulder_pan, homing_offset: 2048 } }), /shoulder_pan\.homing_offset must be -2047\.\.2047/);
    assert.throws(bad({ left_arm: {} }), /unknown motor "left_arm"/);
    const { gripper: _, ...noGripper } = LEROBOT_FILE;
    assert.throws(() => parseLerobotCalibration(noGripper, "f.json"), /motor gripper is missing/);
    assert.throws(() => parseLerobotCalibration([], "f.json"), /must be a JSON object keyed by motor name/);
  });
  it("says when the file is not JSON", () => {
    const dir = mkdtempSync(join(tmpdir(), "lerobot-cal-"));
    const path = join(dir, "broken.json");
    writeFileSync(path, "{ not json");
    assert.throws(() => loadLerobotCalibration(path), /broken\.json: not valid JSON/);
  });
});
