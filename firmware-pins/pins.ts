/**
 * Robot models, their firmware releases, and what is installed on which cell: the facts behind
 * every `model@firmware` pin. `@latest` resolves to the newest release installed on at least one
 * cell, and the resolved pin is what a run records.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export type RobotClass = "humanoid" | "quadruped-manip" | "bimanual" | "mobile-manipulator" | "fixed-arm" | "arm-pod";
export type Tier = "soak" | "verify";

export const ROBOT_CLASSES: readonly RobotClass[] = [
  "humanoid", "quadruped-manip", "bimanual", "mobile-manipulator", "fixed-arm", "arm-pod",
];
export const TIERS: readonly Tier[] = ["soak", "verify"];

export interface RobotModel {
  id: string;
  class: RobotClass;
  /** Actuated joints a policy commands, the end effector included (the action vector's length). */
  dof: number;
  hands: string;
  tier: Tier;
  /** Every firmware release known for the model, oldest first. */
  firmwares: string[];
  joints: string[];
  /**
   * Safety limits the cell agent applies unless its config says otherwise: change per step, joint
   * limits, workspace box, servo effort (checked by cell-agent/safety/catalog-safety.ts; docs/safety.md).
   */
  safety?: unknown;
}

export interface Installation {
  cell: string;
  model: string;
  firmware: string;
  environment: string;
}

export interface FirmwarePins {
  models: RobotModel[];
  installations: Installation[];
}

export interface RobotPin {
  model: string;
  /** A concrete version, or "latest". */
  firmware: string;
}

const here = dirname(fileURLToPath(import.meta.url));

/** Loads the catalog and the installation table (default: the files beside this module). */
export function loadFirmwarePins(installationsPath = join(here, "installations.json"), catalogPath = join(here, "catalog.json")): FirmwarePins {
  const catalog = JSON.parse(readFileSync(catalogPath, "utf8")) as { models: RobotModel[] };
  const installed = JSON.parse(readFileSync(installationsPath, "utf8")) as { cells: Installation[] };
  return { models: catalog.models, installations: installed.cells };
}

/** Parses `model@firmware` or `model@latest`; returns null when the string has neither form. */
export function parseRobotPin(text: string): RobotPin | null {
  const match = /^([a-z0-9][a-z0-9_-]*)@([A-Za-z0-9._-]+)$/.exec(text.trim());
  return match ? { model: match[1], firmware: match[2] } : null;
}

/** Orders dotted versions numerically ("3.10" after "3.9"); non-numeric parts compare as text. */
export function compareFirmware(a: string, b: string): number {
  const left = a.split(/[.-]/);
  const right = b.split(/[.-]/);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const x = left[i] ?? "0";
    const y = right[i] ?? "0";
    const nx = Number(x);
    const ny = Number(y);
    const order = Number.isFinite(nx) && Number.isFinite(ny) ? nx - ny : x.localeCompare(y);
    if (order !== 0) return Math.sign(order);
  }
  return 0;
}

export type PinResolution =
  | { ok: true; model: RobotModel; firmware: string; pin: string; cells: string[] }
  | { ok: false; reason: "malformed" | "unknown_model" | "not_installed"; message: string };

/** Resolves a robot pin against the installations; `@latest` becomes the newest installed release. */
export function resolveRobotPin(pins: FirmwarePins, text: string): PinResolution {
  const pin = parseRobotPin(text);
  if (!pin) {
    return { ok: false, reason: "malformed", message: `robot must be "<model>@<firmware>" or "<model>@latest"; got ${JSON.stringify(text)}` };
  }
  const model = pins.models.find((m) => m.id === pin.model);
  if (!model) {
    const known = pins.models.map((m) => m.id).join(", ");
    return { ok: false, reason: "unknown_model", message: `robot model "${pin.model}" is not in the catalog; known models: ${known}` };
  }
  const onModel = pins.installations.filter((i) => i.model === model.id);
  const installed = [...new Set(onModel.map((i) => i.firmware))].sort(compareFirmware);
  const firmware = pin.firmware === "latest" ? installed.at(-1) : pin.firmware;
  const cells = onModel.filter((i) => i.firmware === firmware).map((i) => i.cell);
  if (!firmware || cells.length === 0) {
    const have = installed.length ? installed.map((f) => `${model.id}@${f}`).join(", ") : "none";
    return { ok: false, reason: "not_installed", message: `${text} is not installed on any cell; installed: ${have}` };
  }
  return { ok: true, model, firmware, pin: `${model.id}@${firmware}`, cells };
}

/** Firmware versions of a model installed on at least one cell, oldest first. */
export function installedFirmwares(pins: FirmwarePins, modelId: string): string[] {
  return [...new Set(pins.installations.filter((i) => i.model === modelId).map((i) => i.firmware))].sort(compareFirmware);
}

/** The pinned firmware for a cell, or undefined when the cell is not in the table. */
export function installationOf(pins: FirmwarePins, cellId: string): Installation | undefined {
  return pins.installations.find((i) => i.cell === cellId);
}
