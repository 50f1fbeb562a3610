/**
 * Lighting presets of the tabletop environments: per-channel gains applied to rendered colours,
 * plus a gentle falloff away from the lamp (brighter near the robot, darker at the far edge).
 */

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
