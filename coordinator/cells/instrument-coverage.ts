/**
 * Which cells can score a task: a cell can when it has every instrument kind the task's success
 * predicates and stages read (protocol/predicates/binding.ts). Instrument kinds are data, taken from
 * what each cell reports (Hello.instruments, minus Heartbeat.instruments_down while connected), so a
 * new kind (an `operator` a lab offers, say) needs a line in the binding table, not a change here.
 */
import { checkBindings, type BindingProblem } from "../../protocol/predicates/index.js";

/** One cell's instruments as far as the coordinator knows them. */
export interface CellInstruments {
  cellId: string;
  /**
   * Instrument kinds the cell reported, or null when it never reported any (enrolled or installed,
   * never connected): such a cell never makes a task scorable.
   */
  kinds: readonly string[] | null;
}

/** A predicate or stage the named cells cannot score, with the instrument kinds each lacks. */
export interface CoverageGap {
  problem: BindingProblem;
  /** Cells that reported instruments and lack some of `problem.missing`, with what they lack. */
  lacking: Array<{ cellId: string; missing: string[] }>;
}

export interface Coverage {
  /** Cells able to score every predicate and stage of the task, by id. */
  able: string[];
  /** Cells that reported instruments. */
  reporting: string[];
  /** Cells that never reported instruments. */
  silent: string[];
  /** Each predicate at least one reporting cell cannot score; empty when some cell can score all. */
  gaps: CoverageGap[];
}

/** Checks `task` against each cell; throws PredicateSyntaxError if the task does not parse. */
export function instrumentCoverage(task: { success_predicates?: unknown; stages?: unknown }, cells: readonly CellInstruments[]): Coverage {
  const able: string[] = [];
  const reporting: string[] = [];
  const silent: string[] = [];
  const gapsByKey = new Map<string, CoverageGap>();
  for (const cell of [...cells].sort((a, b) => a.cellId.localeCompare(b.cellId))) {
    if (cell.kinds === null) {
      silent.push(cell.cellId);
      continue;
    }
    reporting.push(cell.cellId);
    const problems = checkBindings(task, cell.kinds);
    if (problems.length === 0) able.push(cell.cellId);
    for (const problem of problems) {
      const key = `${problem.field}[${problem.index}]`;
      const gap = gapsByKey.get(key) ?? { problem: { ...problem, missing: [] }, lacking: [] };
      gap.problem.missing = [...new Set([...gap.problem.missing, ...problem.missing])].sort();
      gap.lacking.push({ cellId: cell.cellId, missing: problem.missing });
      gapsByKey.set(key, gap);
    }
  }
  return { able, reporting, silent, gaps: able.length > 0 ? [] : [...gapsByKey.values()] };
}

/**
 * The gaps in plain words: `success_predicates[0] "placed" reads instrument mocap, which cell so101-b
 * lacks (it reports joint_states, camera, estop)`; joined with "; ". Bounded: at most 5 gaps and 8
 * cells each are named.
 */
export function describeGaps(gaps: readonly CoverageGap[], kindsOf: (cellId: string) => readonly string[] | null): string {
  const shown = gaps.slice(0, 5).map(({ problem, lacking }) => {
    const cells = lacking.slice(0, 8).map(({ cellId, missing }) => {
      const has = [...new Set(kindsOf(cellId) ?? [])];
      return `${cellId} lacks ${missing.join(" and ")} (it reports ${has.length ? has.join(", ") : "no instruments"})`;
    });
    const more = lacking.length > 8 ? `, and ${lacking.length - 8} more cells` : "";
    return `${problem.field}[${problem.index}] "${problem.name}" reads instrument ${problem.missing.join(" and ")}: ${cells.join("; ")}${more}`;
  });
  return shown.join("; ") + (gaps.length > 5 ? `; and ${gaps.length - 5} more predicates` : "");
}
