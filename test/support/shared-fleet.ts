/**
 * A coordinator with a simulated fleet shared by the spec files that need the same cells and leave
 * it as they found it, so the suite starts one fleet per group instead of one per file.
 *
 * Safe to share: files that submit runs and read results. Not safe: anything that e-stops, kills,
 * unplugs or revokes a cell, slows the simulation, or sets account-wide limits (budgets, caps) or
 * webhooks it does not remove again; those files call startTestService() for a fleet of their own.
 *
 * A fleet is named by its cells and the few start options a group may need (`SharedFleetSpec`):
 * files that ask for the same spec share one fleet, a different spec is another fleet.
 *
 * A file calls `useSharedFleet(spec, use)` inside its `describe`: mocha runs describe bodies when it
 * loads the files, before any test, so each fleet knows how many files of this run will use it. A
 * fleet starts when its first file's `before` hook asks for it and stops when its last file's `after`
 * hook lets it go (an idle fleet costs CPU: its coordinator and cells keep their timers, heartbeats
 * and links, about 0.02 CPU-s a second for two cells and their coordinator), or at the end of the run
 * (root hook) if a file of the group never ran its hooks (skipped, or filtered out by --grep).
 * Runs a file leaves open are halted when it releases the fleet. `npm test` deals the files of a fleet to
 * one mocha and runs them one after another (scripts/test-suite.mjs), so the fleet is up only while they run.
 * Mocha runs `after` hooks in the order they are defined: a file whose own `after` still uses the service
 * (to delete what it added) defines that hook before it calls useSharedFleet.
 */
import type { SimEngine } from "../../simulators/physics/engine.js";
import type { SimResetMode } from "../../simulators/sim-cell.js";
import { startTestService, type TestService } from "../integration/helpers.js";
import { atSuiteEnd } from "./suite-end.js";

/** The cells of a shared fleet and the start options a group may set (see startTestService). */
export interface SharedFleetSpec {
  cells: readonly string[];
  simEngine?: SimEngine;
  simResets?: SimResetMode;
}

const fleets = new Map<string, Promise<TestService>>();
const keys = new WeakMap<TestService, string>();
/** Per fleet, the files loaded in this run that have not yet released it. */
const usersLeft = new Map<string, number>();
let registered = false;

const specOf = (fleet: SharedFleetSpec | readonly string[]): SharedFleetSpec => ("cells" in fleet ? fleet : { cells: fleet as readonly string[] });
const keyOf = (spec: SharedFleetSpec) => JSON.stringify([[...spec.cells].sort(), spec.simEngine ?? null, spec.simResets ?? null]);

/** The shared service for exactly these cells (and options), started on first use. */
export function acquireSharedFleet(fleet: SharedFleetSpec | readonly string[]): Promise<TestService> {
  const spec = specOf(fleet);
  const key = keyOf(spec);
  let service = fleets.get(key);
  if (!service) {
    const started = startTestService({
      cells: [...spec.cells], ...(spec.simEngine ? { simEngine: spec.simEngine } : {}), ...(spec.simResets ? { simResets: spec.simResets } : {}),
    });
    service = started;
    fleets.set(key, started);
    started.then(
      (s) => keys.set(s, key),
      // A start that failed is forgotten, so the next file tries again instead of reusing the failure.
      () => fleets.get(key) === started && fleets.delete(key),
    );
  }
  if (!registered) {
    registered = true;
    atSuiteEnd(stopSharedFleets);
  }
  return service;
}

/**
 * Done with the shared service. Runs the file left open (a pilot it only started, a test that
 * failed half way) are halted, the way a file's own fleet would have dropped them at its stop, so
 * the next file finds no queued work; the service stays up for it. If that fails, the service is
 * stopped and the next file starts a fresh one.
 */
export async function releaseSharedFleet(service: TestService | undefined): Promise<void> {
  if (!service) return;
  try {
    const open = await service.coordinator.db.prepare("SELECT id FROM runs WHERE status NOT IN ('completed', 'failed', 'stopped')").all() as Array<{ id: string }>;
    // halt() needs one of the spec's stop codes; none means "the test is over", queue_timeout is the nearest.
    for (const { id } of open) await service.coordinator.halt(id, "queue_timeout", "test cleanup: the spec file that submitted this run has finished");
  } catch (error) {
    const key = keys.get(service);
    if (key !== undefined) fleets.delete(key);
    await service.stop();
    throw error;
  }
}

/** Stops the fleet of `key` now, if it is up: no file still to run in this process uses it. */
async function stopSharedFleet(key: string): Promise<void> {
  const service = fleets.get(key);
  if (!service) return;
  fleets.delete(key);
  await (await service.catch(() => undefined))?.stop();
}

async function stopSharedFleets(): Promise<void> {
  const all = [...fleets.values()];
  fleets.clear();
  for (const service of all) await (await service.catch(() => undefined))?.stop();
}

/**
 * A spec file's use of the shared service: registers the `before` hook that acquires it (handing it
 * to `use`) and the `after` hook that releases it, and stops the fleet when this file was the last of
 * the run to use it. Call it inside the file's `describe`.
 */
export function useSharedFleet(fleet: SharedFleetSpec | readonly string[], use: (service: TestService) => void): void {
  const key = keyOf(specOf(fleet));
  usersLeft.set(key, (usersLeft.get(key) ?? 0) + 1);
  let service: TestService | undefined;
  before(async () => {
    service = await acquireSharedFleet(fleet);
    use(service);
  });
  after(async () => {
    const left = (usersLeft.get(key) ?? 1) - 1;
    usersLeft.set(key, left);
    try {
      await releaseSharedFleet(service);
    } finally {
      if (left === 0) await stopSharedFleet(key);
    }
  });
}
