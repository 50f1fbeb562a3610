import assert from "node:assert/strict";
import { compareFirmware, loadFirmwarePins, parseRobotPin, resolveRobotPin, ROBOT_CLASSES, TIERS } from "../../firmware-pins/pins.js";

describe("firmware pins", () => {
  const pins = loadFirmwarePins();

  it("orders firmware numerically, not as text", () => {
    assert.ok(compareFirmware("3.10", "3.9") > 0);
    assert.ok(compareFirmware("5.7.2", "5.9.0") < 0);
    assert.equal(compareFirmware("1.2", "1.2.0"), 0);
  });

  it("parses model@firmware and model@latest only", () => {
    assert.deepEqual(parseRobotPin("so101@3.11"), { model: "so101", firmware: "3.11" });
    assert.deepEqual(parseRobotPin("so101@latest"), { model: "so101", firmware: "latest" });
    assert.equal(parseRobotPin("so101"), null);
    assert.equal(parseRobotPin("@3.11"), null);
  });

  it("resolves @latest to the newest firmware installed on some cell", () => {
    const resolved = resolveRobotPin(pins, "so101@latest");
    assert.ok(resolved.ok);
    assert.equal(resolved.pin, "so101@3.11");
    assert.deepEqual(resolved.cells.sort(), ["so101-b", "so101-c", "so101-d"]);
  });

  it("keeps an older pin that is still installed somewhere", () => {
    const resolved = resolveRobotPin(pins, "so101@3.10");
    assert.ok(resolved.ok);
    assert.deepEqual(resolved.cells, ["so101-a"]);
  });

  it("refuses a known release that no cell has, naming what is installed", () => {
    const resolved = resolveRobotPin(pins, "fr3@5.7.2");
    assert.equal(resolved.ok, false);
    assert.ok(!resolved.ok && resolved.reason === "not_installed");
    assert.match(!resolved.ok ? resolved.message : "", /installed: fr3@5\.9\.0/);
  });

  it("refuses unknown models and malformed pins", () => {
    const unknown = resolveRobotPin(pins, "r2d2@1.0");
    assert.ok(!unknown.ok && unknown.reason === "unknown_model");
    const malformed = resolveRobotPin(pins, "so101");
    assert.ok(!malformed.ok && malformed.reason === "malformed");
  });

  it("has a default fleet with every robot class, both tiers, and one model on two firmwares", () => {
    const classes = new Set(pins.installations.map((i) => pins.models.find((m) => m.id === i.model)!.class));
    assert.deepEqual([...classes].sort(), [...ROBOT_CLASSES].sort());
    const tiers = new Set(pins.installations.map((i) => pins.models.find((m) => m.id === i.model)!.tier));
    assert.deepEqual([...tiers].sort(), [...TIERS].sort());
    const so101 = new Set(pins.installations.filter((i) => i.model === "so101").map((i) => i.firmware));
    assert.ok(so101.size >= 2);
    for (const model of pins.models) assert.equal(model.joints.length, model.dof, `${model.id} joints vs dof`);
  });
});
