/**
 * Prints the round-trip time of `SerialServoBus.readState()` (one SYNC_READ of the six SO-101 joints)
 * against the emulator over SerialPortMock, for both protocols. A figure, not a test:
 *
 *   npx tsx simulators/servo-bus/bench-sync-read.ts [iterations]
 *
 * NOTE: SerialPortMock has no wire time; at 1 Mbit/s a real 6-servo state read adds about
 * (request + 6 replies) x 10 bits: 140 bytes = 1.40 ms Feetech, 212 bytes = 2.12 ms Dynamixel,
 * plus each servo's return delay.
 */
import { SerialServoBus } from "../../cell-agent/devices/servo/servo-bus.js";
import type { ServoModel } from "../../cell-agent/devices/servo/control-tables.js";
import { createMockServoPort } from "./mock-port.js";

const JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];
const iterations = Number(process.argv[2] ?? 2000);

for (const model of ["sts3215", "xm430-w350"] as ServoModel[]) {
  const mock = await createMockServoPort({ nowMs: () => performance.now(), servos: JOINTS.map((_, i) => ({ id: i + 1, model })) });
  const joints = Object.fromEntries(JOINTS.map((name, i) => [name, { id: i + 1, model, homingOffsetTicks: 2048, rangeMinTicks: 0, rangeMaxTicks: 4095, driveMode: 0 as const }]));
  const bus = await SerialServoBus.open({ jointNames: JOINTS, calibration: { calibratedAt: null, joints }, port: mock.port });
  for (let i = 0; i < 200; i++) await bus.readState();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    await bus.readState();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  const q = (p: number) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))].toFixed(3);
  console.log(`${model}: sync read of ${JOINTS.length} servos via SerialPortMock, n=${iterations}: p50 ${q(0.5)} ms, p90 ${q(0.9)} ms, p99 ${q(0.99)} ms`);
  await bus.close();
  await mock.close();
}
