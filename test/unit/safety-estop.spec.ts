/** The e-stop latch and its reset rules, and the watcher's torque-off path, with a fake bus and button. */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JointState, MotorBus } from "../../cell-agent/hardware/types.js";
import { EstopResetRefused, EstopWatch, nextLatchState, type EstopTrip, type TorqueOffOutcome } from "../../cell-agent/safety/estop-watch.js";
import { SimEstopInput } from "../../simulators/devices/sim-estop-input.js";

class FakeBus implements MotorBus {
  readonly jointNames = ["a", "b"];
  torque: boolean[] = [];
  goals: number[][] = [];
  failTorqueOff = false;
  async readFirmware() { return "1.0"; }
  async readState(): Promise<JointState> {
    return { tNs: 0n, positionRad: [0.1, 0.2], velocityRadS: [0, 0], currentA: [0, 0], temperatureC: [30, 30] };
  }
  async writeGoalPositions(positionRad: readonly number[]) { this.goals.push([...positionRad]); }
  async setTorque(enabled: boolean) {
    if (!enabled && this.failTorqueOff) throw new Error("no reply from id 3");
    this.torque.push(enabled);
  }
}

describe("safety: e-stop latch", () => {
  it("a trigger always latches; a reset needs the latch and a released input", () => {
    assert.equal(nextLatchState("armed", "trigger", true), "latched");
    assert.equal(nextLatchState("latched", "trigger", true), "latched");
    assert.throws(() => nextLatchState("latched", "reset", true), (e: Error) => e instanceof EstopResetRefused && /still pressed/.test(e.message));
    assert.throws(() => nextLatchState("armed", "reset", false), /not e-stopped/);
    assert.equal(nextLatchState("latched", "reset", false), "armed");
  });

  describe("EstopWatch", () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "assay-estop-"))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    const watch = (bus: FakeBus, input: SimEstopInput, seen: { trips: EstopTrip[]; outcomes: TorqueOffOutcome[] }) =>
      new EstopWatch({
        input, motors: bus, latchFile: join(dir, "latch.json"),
        onTrip: (trip) => seen.trips.push(trip),
        onTorqueOff: (outcome) => seen.outcomes.push(outcome),
      });

    it("turns torque off on the trigger itself, measures the latency and latches", async () => {
      const bus = new FakeBus();
      const input = new SimEstopInput();
      const seen = { trips: [] as EstopTrip[], outcomes: [] as TorqueOffOutcome[] };
      const w = watch(bus, input, seen);
      assert.equal(w.state(), "armed");
      input.press();
      // Synchronous: torque off was issued before press() returned, and the latch is set.
      assert.deepEqual(bus.torque, [false]);
      assert.equal(w.state(), "latched");
      assert.equal(seen.trips.length, 1);
      const outcome = await w.lastTrip()!.torqueOff;
      assert.ok(outcome.latencyMs >= 0 && outcome.latencyMs < 50, `latency ${outcome.latencyMs}`);
      assert.equal(outcome.error, undefined);
      assert.deepEqual(seen.outcomes, [outcome], "onTorqueOff ran before torqueOff resolved");
      w.close();
    });

    it("refuses torque on and goal writes while latched; reads and torque off pass", async () => {
      const bus = new FakeBus();
      const input = new SimEstopInput();
      const w = watch(bus, input, { trips: [], outcomes: [] });
      const guarded = w.guard(bus);
      await guarded.writeGoalPositions([1, 2]);
      input.press();
      await assert.rejects(guarded.writeGoalPositions([3, 4]), /e-stopped/);
      await assert.rejects(guarded.setTorque(true), /e-stopped/);
      await guarded.setTorque(false);
      assert.deepEqual((await guarded.readState()).positionRad, [0.1, 0.2]);
      assert.deepEqual(bus.goals, [[1, 2]], "no goal reached the bus after the trigger");
      assert.deepEqual(bus.torque, [false, false]);
      w.close();
    });

    it("resets only with the input released, and the latch survives a restart until then", async () => {
      const bus = new FakeBus();
      const input = new SimEstopInput();
      const w = watch(bus, input, { trips: [], outcomes: [] });
      input.press();
      await w.lastTrip()!.torqueOff;
      assert.throws(() => w.reset(), /still pressed/);
      input.release();
      w.close();
      await w.persisted();
      // An agent restarted with the button released is still latched.
      const restarted = watch(bus, input, { trips: [], outcomes: [] });
      assert.equal(restarted.state(), "latched");
      restarted.reset();
      assert.equal(restarted.state(), "armed");
      await restarted.persisted();
      assert.equal(existsSync(join(dir, "latch.json")), false);
      assert.throws(() => restarted.reset(), /not e-stopped/);
      await restarted.guard(bus).setTorque(true);
      assert.equal(bus.torque.at(-1), true);
      restarted.close();
    });

    it("keeps the marker file in step with trips and resets made in quick succession", async () => {
      const input = new SimEstopInput();
      const w = watch(new FakeBus(), input, { trips: [], outcomes: [] });
      input.press();
      input.release();
      w.reset();
      await w.persisted();
      assert.equal(existsSync(join(dir, "latch.json")), false, "the reset's removal comes after the trip's write");
      input.press();
      await w.persisted();
      assert.ok(existsSync(join(dir, "latch.json")), "a second trip writes it again");
      w.close();
    });

    it("turns torque off without waiting for the marker file's write (a disk that makes writes wait)", async () => {
      // The marker is a named pipe that another process starts reading only after 300 ms: opening it to
      // write waits that long, as a write to a disk busy flushing does. A write of the marker on the event
      // loop would hold the torque-off confirmation (and its latency) behind it.
      const latchFile = join(dir, "latch.json");
      execFileSync("mkfifo", [latchFile]);
      const reader = spawn("sh", ["-c", 'sleep 0.3; cat "$0"', latchFile], { stdio: ["ignore", "pipe", "inherit"] });
      let written = "";
      reader.stdout.on("data", (chunk: Buffer) => (written += chunk.toString()));
      const read = once(reader, "close");
      const bus = new FakeBus();
      const input = new SimEstopInput();
      const seen = { trips: [] as EstopTrip[], outcomes: [] as TorqueOffOutcome[] };
      const w = new EstopWatch({ input, motors: bus, latchFile, onTrip: (trip) => seen.trips.push(trip), onTorqueOff: (outcome) => seen.outcomes.push(outcome) });
      input.press();
      const outcome = await w.lastTrip()!.torqueOff;
      assert.deepEqual(bus.torque, [false]);
      assert.ok(outcome.latencyMs < 50, `latency ${outcome.latencyMs} ms: the torque off waited for the marker file`);
      assert.equal(outcome.error, undefined);
      await w.persisted();
      await read;
      assert.match(written, /^\{"at_ms":\d+\}$/, "the marker was written once the pipe was read");
      w.close();
    });

    it("starts latched when the button is pressed at start-up", () => {
      const input = new SimEstopInput();
      input.press();
      const w = watch(new FakeBus(), input, { trips: [], outcomes: [] });
      assert.equal(w.state(), "latched");
      w.close();
    });

    it("reports a torque off the bus could not confirm, still latched", async () => {
      const bus = new FakeBus();
      bus.failTorqueOff = true;
      const input = new SimEstopInput();
      const w = watch(bus, input, { trips: [], outcomes: [] });
      input.press();
      const outcome = await w.lastTrip()!.torqueOff;
      assert.match(outcome.error ?? "", /no reply from id 3/);
      assert.equal(w.state(), "latched");
      w.close();
    });
  });
});
