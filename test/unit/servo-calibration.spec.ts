import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { goalTicksFromRad, jointRadFromTicks, loadCalibration, parseCalibration } from "../../cell-agent/devices/servo/calibration.js";
import { controlTable, decodeRegister, encodeRegister, register } from "../../cell-agent/devices/servo/control-tables.js";
import { compileServoBusOptions } from "../../cell-agent/devices/servo/servo-bus-options.js";

const joint = { id: 1, model: "sts3215", homingOffsetTicks: 2048, rangeMinTicks: 1000, rangeMaxTicks: 3000, driveMode: 0 };

describe("servo calibration", () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), "assay-servo-cal-"))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("loads a calibration file", () => {
    const path = join(dir, "so101.json");
    writeFileSync(path, JSON.stringify({ calibratedAt: "2026-11-20T09:30:00Z", joints: { shoulder_pan: joint, gripper: { ...joint, id: 6, driveMode: 1 } } }));
    const calibration = loadCalibration(path);
    assert.equal(calibration.calibratedAt?.toISOString(), "2026-11-20T09:30:00.000Z");
    assert.equal(calibration.joints.gripper.driveMode, 1);
  });

  it("rejects bad files with the offending value", () => {
    assert.throws(() => parseCalibration({ joints: { a: { ...joint, rangeMinTicks: 3000, rangeMaxTicks: 1000 } } }), /rangeMinTicks \(3000\) must be below rangeMaxTicks \(1000\)/);
    assert.throws(() => parseCalibration({ joints: { a: joint, b: joint } }), /joints a and b share id 1/);
    assert.throws(() => parseCalibration({ joints: { a: { ...joint, model: "sts9999" } } }), /model must be one of .*got "sts9999"/);
    assert.throws(() => parseCalibration({ joints: { a: { ...joint, driveMode: 2 } } }), /driveMode must be 0 \(normal\) or 1 \(inverted\); got 2/);
    assert.throws(() => parseCalibration({ joints: { a: { ...joint, offset: 3 } } }), /unknown key "offset"/);
    assert.throws(() => parseCalibration({ joints: { a: joint, b: { ...joint, id: 2, model: "xl430-w250" } } }), /same protocol/);
    assert.throws(() => loadCalibration(join(dir, "missing.json")), /cannot read the file/);
  });

  it("converts ticks to radians around the homing offset, inverted by drive mode", () => {
    const table = controlTable("sts3215");
    const normal = parseCalibration({ joints: { a: joint } }).joints.a;
    const inverted = { ...normal, driveMode: 1 as const };
    assert.equal(jointRadFromTicks(normal, table, 2048 + 1024), Math.PI / 2);
    assert.equal(jointRadFromTicks(inverted, table, 2048 + 1024), -Math.PI / 2);
    assert.equal(goalTicksFromRad(normal, table, Math.PI / 4), 2048 + 512);
    assert.equal(goalTicksFromRad(inverted, table, Math.PI / 4), 2048 - 512);
  });

  it("clamps every goal into the calibrated range", () => {
    const table = controlTable("sts3215");
    const j = parseCalibration({ joints: { a: joint } }).joints.a;
    assert.equal(goalTicksFromRad(j, table, 100), 3000);
    assert.equal(goalTicksFromRad(j, table, -100), 1000);
    assert.throws(() => goalTicksFromRad(j, table, Number.NaN), /finite/);
  });

  it("encodes registers: sign-magnitude on Feetech, two's complement on Dynamixel", () => {
    const sts = controlTable("sts3215");
    const xm = controlTable("xm430-w350");
    assert.deepEqual(encodeRegister(-10, register(sts, "presentVelocity")), [10, 0x80]);
    assert.deepEqual(encodeRegister(-10, register(xm, "presentVelocity")), [0xf6, 0xff, 0xff, 0xff]);
    assert.equal(decodeRegister(Uint8Array.from([0xf6, 0xff, 0xff, 0xff]), 128, register(xm, "presentVelocity")), -10);
    assert.equal(decodeRegister(Uint8Array.from([10, 0x80]), 58, register(sts, "presentVelocity")), -10);
  });
});

describe("servo bus options", () => {
  const calibration = parseCalibration({ joints: { a: joint } });

  it("fills documented defaults", () => {
    const o = compileServoBusOptions({ jointNames: ["a"], calibration, path: "/dev/null" });
    assert.deepEqual({ b: o.baudRate, t: o.transactionTimeoutMs, r: o.retries, w: o.watchdogMs }, { b: 1_000_000, t: 10, r: 3, w: 100 });
  });

  it("rejects unknown keys, missing joints and a missing port", () => {
    assert.throws(() => compileServoBusOptions({ jointNames: ["a"], calibration, path: "/dev/x", retry: 2 } as never), /unknown servo bus option "retry"/);
    assert.throws(() => compileServoBusOptions({ jointNames: ["a", "b"], calibration, path: "/dev/x" }), /no entry for joint\(s\) b/);
    assert.throws(() => compileServoBusOptions({ jointNames: ["a"], calibration }), /exactly one of path/);
    assert.throws(() => compileServoBusOptions({ jointNames: ["a"], calibration, path: "/dev/x", retries: -1 }), /retries must be a non-negative integer; got -1/);
  });
});
