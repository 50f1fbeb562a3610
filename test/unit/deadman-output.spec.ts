/**
 * The dead-man output (cell-agent/devices/deadman/): it toggles its line while the agent lives,
 * drives it low on close, says once when the line fails; the serial driver sets DTR or RTS through
 * serialport's `set`; the GPIO driver writes a sysfs value file; the config section is checked.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileAgentConfig } from "../../cell-agent/config.js";
import { DeadmanOutput, type DeadmanLine } from "../../cell-agent/devices/deadman/deadman-output.js";
import { openGpioDeadmanLine } from "../../cell-agent/devices/deadman/gpio-deadman.js";
import { serialDeadmanLine } from "../../cell-agent/devices/deadman/serial-deadman.js";

function fakeLine(fail = () => false): DeadmanLine & { levels: boolean[]; closed: boolean } {
  const line = {
    describe: "fake line", levels: [] as boolean[], closed: false,
    set: async (high: boolean) => {
      if (fail()) throw new Error("EIO");
      line.levels.push(high);
    },
    close: async () => {
      line.closed = true;
    },
  };
  return line;
}

const BASE = { cellId: "c", cellToken: "t", robotModel: "so101", environment: "tabletop@1", dataDir: "/tmp/x" };

describe("dead-man output", () => {
  it("toggles its line while alive and drives it low when closed", async () => {
    const line = fakeLine();
    const output = new DeadmanOutput(line, { togglePeriodMs: 1 });
    const four = output.nextToggle().then(() => output.nextToggle()).then(() => output.nextToggle()).then(() => output.nextToggle());
    output.start();
    await four;
    assert.deepEqual(line.levels.slice(0, 4), [true, false, true, false]);
    await output.close();
    assert.equal(line.levels.at(-1), false);
    assert.equal(line.closed, true);
  });

  it("logs once when the line cannot be set, and again when it recovers", async () => {
    let failing = true;
    const logs: string[] = [];
    const line = fakeLine(() => failing);
    const output = new DeadmanOutput(line, { togglePeriodMs: 1, log: (l) => logs.push(l) });
    output.start();
    const recovered = output.nextToggle();
    // Let it fail a few beats: await the log line, then heal the line.
    while (logs.length === 0) await new Promise((resolve) => setImmediate(resolve));
    failing = false;
    await recovered;
    await output.close();
    assert.equal(logs.filter((l) => /cannot be set: EIO; the watchdog relay will cut servo power/.test(l)).length, 1, logs.join("\n"));
    assert.ok(logs.some((l) => /toggles again/.test(l)));
    assert.throws(() => new DeadmanOutput(line, { togglePeriodMs: 0 }), /togglePeriodMs must be at least 1; got 0/);
  });

  it("sets DTR or RTS through serialport's set", async () => {
    const calls: object[] = [];
    const port = { set: (options: object, callback: (error: Error | null) => void) => (calls.push(options), callback(null)), close: (callback?: () => void) => callback?.() };
    const dtr = serialDeadmanLine(port, "/dev/ttyUSB1", "dtr");
    assert.equal(dtr.describe, "DTR of /dev/ttyUSB1");
    await dtr.set(true);
    await serialDeadmanLine(port, "/dev/ttyUSB1", "rts").set(false);
    assert.deepEqual(calls, [{ dtr: true }, { rts: false }]);
    const broken = { ...port, set: (_: object, callback: (error: Error | null) => void) => callback(new Error("Input/output error")) };
    await assert.rejects(serialDeadmanLine(broken, "/dev/ttyUSB1", "dtr").set(true), /Input\/output error/);
  });

  it("writes a sysfs GPIO line: exported, an output, its value following the level", async () => {
    const root = mkdtempSync(join(tmpdir(), "assay-gpio-"));
    try {
      mkdirSync(join(root, "gpiochip0"));
      writeFileSync(join(root, "gpiochip0", "base"), "512\n");
      writeFileSync(join(root, "export"), "");
      // The kernel would create the line's folder on export; the fake has it already.
      mkdirSync(join(root, "gpio539"));
      writeFileSync(join(root, "gpio539", "value"), "0");
      const line = openGpioDeadmanLine("gpiochip0", 27, root);
      assert.equal(readFileSync(join(root, "gpio539", "direction"), "utf8"), "low");
      await line.set(true);
      assert.equal(readFileSync(join(root, "gpio539", "value"), "utf8"), "1");
      await line.set(false);
      assert.equal(readFileSync(join(root, "gpio539", "value"), "utf8"), "0");
      await line.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("is configured under safety.deadman, with defaults and errors that name the key", () => {
    assert.deepEqual(compileAgentConfig(BASE).safety, { envelope: {}, deadman: null });
    assert.deepEqual(compileAgentConfig({ ...BASE, safety: { deadman: { kind: "serial", path: "/dev/ttyUSB2" } } }).safety.deadman, { kind: "serial", path: "/dev/ttyUSB2", line: "dtr", togglePeriodMs: 50 });
    assert.deepEqual(compileAgentConfig({ ...BASE, safety: { deadman: { kind: "gpio", line: 27, togglePeriodMs: 20 } } }).safety.deadman, { kind: "gpio", chip: "gpiochip0", line: 27, togglePeriodMs: 20 });
    assert.throws(() => compileAgentConfig({ ...BASE, safety: { deadman: { kind: "serial", path: "/dev/ttyUSB2", line: "cts" } } }), /"safety.deadman.line" must be one of "dtr", "rts"; got "cts"/);
    assert.throws(() => compileAgentConfig({ ...BASE, safety: { deadman: { kind: "gpio" } } }), /"safety.deadman.line" is required/);
    assert.throws(() => compileAgentConfig({ ...BASE, safety: { watchdog: {} } }), /unknown agent config key "safety.watchdog"/);
    assert.throws(() => compileAgentConfig({ ...BASE, safety: { envelope: 3 } }), /"safety.envelope" must be an object/);
    assert.deepEqual(compileAgentConfig({ ...BASE, safety: { envelope: { maxStepRad: 0.2 } } }).safety.envelope, { maxStepRad: 0.2 });
    assert.throws(
      () => compileAgentConfig({ ...BASE, estop: { kind: "serial", path: "/dev/ttyUSB1", line: "cts" }, safety: { deadman: { kind: "serial", path: "/dev/ttyUSB1" } } }),
      /"safety.deadman.path" is the e-stop's serial port \("\/dev\/ttyUSB1"\).*its own serial adapter/,
    );
  });
});
