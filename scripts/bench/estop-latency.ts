/**
 * Benchmark: e-stop trigger to torque off, through the agent's real path (`EstopWatch` subscribed to
 * the button, `SerialServoBus.setTorque(false)` pre-empting the bus queue) over the byte-exact servo
 * emulator behind serialport's SerialPortMock, while a background loop keeps the bus busy with
 * state reads as the control loop would. Each press is confirmed off in every emulated servo's
 * torque register. SerialPortMock has no wire time: at 1 Mbit/s a real bus adds roughly 0.2-0.5 ms
 * for the torque-off write and its read-back.
 *
 * Run alone: npx tsx scripts/bench/estop-latency.ts [presses] (one JSON line per figure).
 */
import { pathToFileURL } from "node:url";
import type { ServoModel } from "../../cell-agent/devices/servo/control-tables.js";
import { SerialServoBus } from "../../cell-agent/devices/servo/servo-bus.js";
import { EstopWatch } from "../../cell-agent/safety/estop-watch.js";
import { SimEstopInput } from "../../simulators/devices/sim-estop-input.js";
import { createMockServoPort } from "../../simulators/servo-bus/mock-port.js";
import type { Figure } from "../bench.js";
import { quantile, round } from "./quantiles.js";

const BENCH = "estop-latency";
const JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];

export async function measure(model: ServoModel, presses: number): Promise<number[]> {
  const mock = await createMockServoPort({ nowMs: () => performance.now(), servos: JOINTS.map((_, i) => ({ id: i + 1, model })) });
  const joints = Object.fromEntries(JOINTS.map((name, i) => [name, { id: i + 1, model, homingOffsetTicks: 2048, rangeMinTicks: 0, rangeMaxTicks: 4095, driveMode: 0 as const }]));
  const bus = await SerialServoBus.open({ jointNames: JOINTS, calibration: { calibratedAt: null, joints }, port: mock.port });
  const input = new SimEstopInput();
  const watch = new EstopWatch({ input, motors: bus, onTrip: () => undefined, onTorqueOff: () => undefined });
  let reading = true;
  const load = (async () => {
    // Back to back, yielding to timers and I/O between reads like a control loop would.
    while (reading) {
      await bus.readState().catch(() => undefined);
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const latencies: number[] = [];
  try {
    for (let i = 0; i < presses; i++) {
      input.release();
      if (watch.latched) watch.reset();
      await watch.guard(bus).setTorque(true);
      // Let a few background reads queue up behind the button.
      await new Promise((resolve) => setTimeout(resolve, 2));
      input.press();
      const outcome = await watch.lastTrip()!.torqueOff;
      if (outcome.error) throw new Error(`press ${i}: ${outcome.error}`);
      const on = JOINTS.map((_, id) => mock.emulator.servo(id + 1).get("torqueEnable")).filter((v) => v !== 0);
      if (on.length) throw new Error(`press ${i}: ${on.length} servo(s) still report torque on`);
      latencies.push(outcome.latencyMs);
    }
  } finally {
    reading = false;
    await load;
    watch.close();
    await bus.close();
    await mock.close();
  }
  return latencies;
}

export async function run(presses = 200): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const model of ["xm430-w350", "sts3215"] as ServoModel[]) {
    const latencies = await measure(model, presses);
    const protocol = model === "sts3215" ? "feetech" : "dynamixel";
    figures.push({ bench: BENCH, metric: `${protocol}.p50`, value: round(quantile(latencies, 0.5)), unit: "ms" });
    figures.push({ bench: BENCH, metric: `${protocol}.p99`, value: round(quantile(latencies, 0.99)), unit: "ms" });
    figures.push({ bench: BENCH, metric: `${protocol}.max`, value: round(Math.max(...latencies)), unit: "ms" });
    figures.push({ bench: BENCH, metric: `${protocol}.p99_vs_target_10ms`, value: round(quantile(latencies, 0.99) / 10), unit: "ratio" });
    figures.push({ bench: BENCH, metric: `${protocol}.presses`, value: latencies.length, unit: "presses" });
  }
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run(Number(process.argv[2] ?? 200))) console.log(JSON.stringify(figure));
}
