import assert from "node:assert/strict";
import { SerialServoBus } from "../../cell-agent/devices/servo/servo-bus.js";
import { SOCAT_MISSING, socatAvailable, startPtyBridge } from "../../simulators/servo-bus/pty-bridge.js";

const joints = ["shoulder_pan", "shoulder_lift"];
const calibration = {
  calibratedAt: null,
  joints: Object.fromEntries(joints.map((name, i) => [name, { id: i + 1, model: "sts3215" as const, homingOffsetTicks: 2048, rangeMinTicks: 0, rangeMaxTicks: 4095, driveMode: 0 as const }])),
};

describe("servo pty bridge", () => {
  if (!socatAvailable()) {
    it("says how to install socat when it is missing", async () => {
      await assert.rejects(startPtyBridge({ servos: [{ id: 1, model: "sts3215" }] }), { message: SOCAT_MISSING });
    });
    it("real bytes over a socat pty pair (skipped: socat is not installed)", function () {
      this.skip();
    });
    return;
  }

  it("lets SerialServoBus open the agent end by path", async () => {
    const bridge = await startPtyBridge({ servos: joints.map((_, i) => ({ id: i + 1, model: "sts3215" as const })) });
    try {
      const bus = await SerialServoBus.open({ jointNames: joints, calibration, path: bridge.agentPath, transactionTimeoutMs: 50 });
      try {
        assert.equal(await bus.readFirmware(), "3.11");
        const state = await bus.readState();
        assert.deepEqual(state.positionRad, [0, 0]);
      } finally {
        await bus.close();
      }
    } finally {
      await bridge.close();
    }
  });
});
