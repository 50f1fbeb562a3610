/**
 * A coordinator with a simulated fleet shared by the spec files that need the same cells and leave
 * it as they found it, so the suite starts one fleet per group instead of one per file.
 *
 * Safe to share: files that submit runs and read results. Not safe: anything that e-stops, kills,
 * unplugs or revokes a cell, slows the simulation, or sets account-wide limits (budgets, caps) or
 * webhooks; those files call startTestService() for a fleet of their own.
 *
 * A file calls `acquireSharedFleet(cells)` in `before` and `releaseSharedFleet(service)` in `after`.
 * The fleet outlives the file (a later file of the group reuses it) and stops at the end of the run
 * (root hook). Runs a file leaves open are halted when it releases the fleet.
 */
import { startTestService, type TestService } from "../integration/helpers.js";
import { atSuiteEnd } from "./suite-end.js";

const fleets = new Map<string, Promise<TestService>>();
const keys = new WeakMap<TestService, string>();
let registered = false;

const keyOf = (cells: readonly string[]) => [...cells].sort().join(",");

/** The shared service for exactly these cells, started on first use. */
export function acquireSharedFleet(cells: readonly string[]): Promise<TestService> {
  const key = keyOf(cells);
  let service = fleets.get(key);
  if (!service) {
    const started = startTestService({ cells: [...cells] });
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

async function stopSharedFleets(): Promise<void> {
  const all = [...fleets.values()];
  fleets.clear();
  for (const service of all) await (await service.catch(() => undefined))?.stop();
}

/**
 * A spec file's use of the shared service: registers the `before` hook that acquires it (handing it
 * to `use`) and the `after` hook that releases it. Call it inside the file's `describe`.
 */
export function useSharedFleet(cells: readonly string[], use: (service: TestService) => void): void {
  let service: TestService | undefined;
  before(async () => {
    service = await acquireSharedFleet(cells);
    use(service);
  });
  after(async () => {
    await releaseSharedFleet(service);
  });
}
