/**
 * Submission check (spec 7, `contract_validation_failed`: "a task predicate binding to no
 * instrument"): some installed cell matching each unit's robot pin and environment must have every
 * instrument the unit's task predicates read, as the cells themselves last reported them.
 *
 * "Installed" means listed in firmware-pins/installations.json for the pin, enrolled and not revoked.
 * A connected cell counts with the instruments of its current Hello (configured and opened; one
 * that stopped answering still counts, since the run then waits for it rather than being refused);
 * a cell not connected now counts with the instruments of the last Hello it sent (the `cells` row; a
 * doctor's Hello, which lists none, leaves them as they were);
 * a cell that never connected has reported nothing and never makes a task scorable. When no matching
 * cell has ever reported (a fleet still coming up), there is nothing to judge by: the run is accepted
 * and waits, and the scheduler gives it only to cells that can score it.
 */
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import { describeGaps, instrumentCoverage, type CellInstruments } from "../cells/instrument-coverage.js";
import { listCellsById } from "../store/cells-repo.js";
import { findVisibleFrozenRevision } from "../store/tasks-repo.js";
import { contract } from "./field-checks.js";
import type { ValidateRunContext } from "./run-request.js";

export interface ScoredUnit {
  robot: string;
  model: string;
  firmware: string;
  environment: string;
  /** Frozen task revision `<name>@v<N>`. */
  task: string;
}

/** Cells firmware-pins/installations.json lists for a robot pin and environment, by id. */
function installationsOf(pins: FirmwarePins, unit: { model: string; firmware: string; environment: string }): string[] {
  return pins.installations.filter((i) => i.model === unit.model && i.firmware === unit.firmware && i.environment === unit.environment).map((i) => i.cell).sort();
}

/** The instruments each installed cell matching `unit` last reported; null for a cell that never did. */
export async function reportedInstruments(ctx: ValidateRunContext, unit: Pick<ScoredUnit, "model" | "firmware" | "environment">): Promise<CellInstruments[]> {
  const connected = new Map((await ctx.fleet.connectedCells()).map((c) => [c.cellId, c]));
  const reported: CellInstruments[] = [];
  const installed = installationsOf(ctx.pins, unit);
  // One read for every installed cell: a pin may list hundreds, and every submission asks.
  const rows = new Map((await listCellsById(ctx.db, installed)).map((row) => [row.id, row]));
  for (const cellId of installed) {
    const row = rows.get(cellId);
    if (row?.revoked) continue;
    const live = connected.get(cellId);
    // A connected session listing no instruments is the doctor's: the last agent Hello still holds.
    if (live && live.instruments.length > 0) reported.push({ cellId, kinds: live.instruments.map((i) => i.kind) });
    else reported.push({ cellId, kinds: row?.hello ? kindsOfHello(row.hello) : null });
  }
  return reported;
}

function kindsOfHello(json: string): string[] | null {
  try {
    const hello = JSON.parse(json) as { instruments?: Array<{ kind?: unknown }> };
    return Array.isArray(hello.instruments) ? hello.instruments.map((i) => String(i.kind)) : null;
  } catch {
    return null;
  }
}

/** Throws contract_validation_failed naming the predicate, the instrument and the cells lacking it. */
export async function checkUnitsScorable(ctx: ValidateRunContext, units: readonly ScoredUnit[]): Promise<void> {
  const seen = new Set<string>();
  for (const unit of units) {
    const key = `${unit.robot}|${unit.environment}|${unit.task}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const match = /^(.+)@v(\d+)$/.exec(unit.task);
    const spec = match ? (await findVisibleFrozenRevision(ctx.db, ctx.accountId, match[1], Number(match[2])))?.spec : undefined;
    if (!spec) continue; // a task id pin or a revision the kind resolved otherwise: checked by the kind
    const cells = await reportedInstruments(ctx, unit);
    const coverage = instrumentCoverage(spec as { success_predicates?: unknown; stages?: unknown }, cells);
    if (coverage.able.length > 0 || coverage.reporting.length === 0) continue;
    const kindsOf = (cellId: string) => cells.find((c) => c.cellId === cellId)?.kinds ?? null;
    const silent = coverage.silent.length ? `; installed cells that never reported their instruments (never connected): ${coverage.silent.join(", ")}` : "";
    contract(
      `task ${unit.task} cannot be scored by any installed cell with ${unit.robot} in ${unit.environment}: ${describeGaps(coverage.gaps, kindsOf)}${silent}; ` +
        `fit the instrument to a cell (its agent reports it when it connects), or submit a task whose predicates read instruments those cells have`,
    );
  }
}
