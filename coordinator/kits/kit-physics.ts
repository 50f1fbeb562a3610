/**
 * A kit's physical description for a cell: what a task's `kit/<name>` initial condition places in
 * the scene. It comes from the kit's tracking record (POST /v1/kits/{id}/track):
 *
 * - `mass_g`: the tracked mass;
 * - `dimensions_mm`: `[x, y, z]` of the box the kit is modelled as, from the track operation when
 *   given, else KIT_DEFAULT_DIMENSIONS_MM (a mesh scan is recorded but not used for geometry yet);
 * - `colour_rgb`: KIT_DEFAULT_COLOUR_RGB (a teal no reference policy mistakes for the red cube);
 * - `mocap_markers`, `mesh_scan`: as tracked; the cell's mocap reports the kit as `kit/<name>`.
 *
 * The scheduler adds these, keyed by kit name, to the task_json it sends (`kits`).
 */
import type { Db } from "../store/database.js";
import { findKitByName, type KitTracking } from "../store/kits-repo.js";

/** Box size of a kit whose tracking gives no `dimensions_mm`: 60 x 60 x 60 mm. */
export const KIT_DEFAULT_DIMENSIONS_MM: [number, number, number] = [60, 60, 60];
/** Rendering colour of every kit (sRGB 0..255). */
export const KIT_DEFAULT_COLOUR_RGB: [number, number, number] = [38, 150, 160];
const KIT_PREFIX = "kit/";

/** The wire shape of one kit in task_json `kits` (snake_case, spec units in the names). */
export interface KitPhysical {
  name: string;
  mass_g: number;
  dimensions_mm: [number, number, number];
  colour_rgb: [number, number, number];
  mocap_markers: number;
  mesh_scan: boolean;
}

/** The physical description of a tracked kit. */
export function kitPhysicalOf(name: string, tracking: KitTracking): KitPhysical {
  return {
    name,
    mass_g: tracking.mass_g,
    dimensions_mm: tracking.dimensions_mm ?? KIT_DEFAULT_DIMENSIONS_MM,
    colour_rgb: KIT_DEFAULT_COLOUR_RGB,
    mocap_markers: tracking.mocap_markers,
    mesh_scan: tracking.mesh_scan,
  };
}

/**
 * Resolves every `kit/<name>` object of a task spec's initial conditions to its kit of `accountId`
 * (the task's owner). Kits that are gone or lack tracking are left out: the cell then places the
 * object with its generic shape, and the coordinator logs nothing (task validation already
 * required the kit to be available).
 */
export async function resolveTaskKits(db: Db, accountId: string | null, spec: { initial_conditions?: unknown }): Promise<Record<string, KitPhysical>> {
  const kits: Record<string, KitPhysical> = {};
  if (!accountId || typeof spec.initial_conditions !== "object" || spec.initial_conditions === null) return kits;
  for (const condition of Object.values(spec.initial_conditions as Record<string, { object?: unknown }>)) {
    const object = condition?.object;
    if (typeof object !== "string" || !object.startsWith(KIT_PREFIX)) continue;
    const name = object.slice(KIT_PREFIX.length);
    const row = await findKitByName(db, accountId, name);
    if (row?.tracking) kits[name] = kitPhysicalOf(name, row.tracking);
  }
  return kits;
}
