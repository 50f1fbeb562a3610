/**
 * Lighting of the tabletop environments. A preset gives per-channel gains and a gentle falloff away
 * from the lamp (brighter near the robot, darker at the far edge). Faces are shaded by their normal
 * against the lamp's direction (ambient plus Lambert), normalised so that an upward face, the table
 * top or a cube's top, shows its material colour times the gains: the colours the policies' vision
 * was tuned on.
 */
import type { Vec3 } from "./solids.js";

export interface LightingPreset {
  gain: [number, number, number];
  /** Relative brightness change per metre along +x (the lamp sits over the robot). */
  falloffPerM: number;
}

export const LIGHTING_PRESETS: Readonly<Record<string, LightingPreset>> = {
  nominal: { gain: [1, 1, 1], falloffPerM: -0.4 },
  dim: { gain: [0.45, 0.45, 0.48], falloffPerM: -0.6 },
  bright: { gain: [1.35, 1.35, 1.33], falloffPerM: -0.3 },
  warm: { gain: [1.12, 0.9, 0.64], falloffPerM: -0.4 },
};

/** The preset for a name; unknown names render as nominal. */
export function lightingPreset(name: string): LightingPreset {
  return LIGHTING_PRESETS[name] ?? LIGHTING_PRESETS.nominal;
}

/** The preset under a cell's own colour gains (cell-variation.ts); gains of 1 give the preset itself. */
export function tintedPreset(preset: LightingPreset, colourGain: readonly [number, number, number]): LightingPreset {
  if (colourGain.every((g) => g === 1)) return preset;
  return { ...preset, gain: [preset.gain[0] * colourGain[0], preset.gain[1] * colourGain[1], preset.gain[2] * colourGain[2]] };
}

/** World x where the falloff is 1 (the middle of the overhead camera's view), metres. */
const FALLOFF_CENTRE_X_M = 0.225;
/** Unit vector towards the lamp: above the robot, a little to its left. */
const TO_LAMP: Vec3 = (() => {
  const v = [-0.25, 0.1, 1];
  const n = Math.hypot(v[0], v[1], v[2]);
  return [v[0] / n, v[1] / n, v[2] / n] as Vec3;
})();
const AMBIENT = 0.55;
const DIFFUSE = 0.5;
const UPWARD = AMBIENT + DIFFUSE * TO_LAMP[2];

/** Brightness of a face with this unit normal, relative to an upward face (1). */
export function shadeOf(normal: Vec3): number {
  const lambert = normal[0] * TO_LAMP[0] + normal[1] * TO_LAMP[1] + normal[2] * TO_LAMP[2];
  return (AMBIENT + DIFFUSE * Math.max(0, lambert)) / UPWARD;
}

/** The lamp's falloff factor at world x. */
export function falloffAt(preset: LightingPreset, xM: number): number {
  return 1 + preset.falloffPerM * (xM - FALLOFF_CENTRE_X_M);
}

