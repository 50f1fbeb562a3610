/**
 * The JSON text of a run's view (run-view.ts), remembered by run for as long as the run reads back
 * the same: GET /v1/runs/{run_id} reads the run from the store on every request, and when every
 * column the view is made from holds what it held last time (`storedColumns`, compared value by
 * value) and the scheduler's `waiting` is the same, the view is the same text, so it is not parsed
 * and serialised again (issue 29). What is remembered is the text as `toAnswer` turns it into an
 * answer (the route: its bytes and ETag, http/prepared-json.ts), so that work too is done once per
 * text. Nothing is invalidated: a write to the run, by this coordinator or another, on either
 * engine, changes what the next read returns, and that read makes a new text. At most MAX_CHARS of
 * stored and view text are kept; the runs read longest ago are dropped first.
 */
import { sameStoredColumns, type StoredRunViewRecord } from "../store/runs-repo.js";
import { runView, type RunWait } from "./run-view.js";

/** Characters of stored and view text kept at most (two bytes each, at worst): a few thousand typical runs. */
const MAX_CHARS = 4_000_000;
/** A run whose texts are longer than this (a large Result) is served without being remembered. */
const MAX_ENTRY_CHARS = MAX_CHARS / 16;

interface Remembered<T> {
  storedColumns: readonly (string | null)[];
  waiting: RunWait | undefined;
  body: T;
  chars: number;
}

/** `T`: what a view's JSON text is turned into by `toAnswer` (default: the text itself). */
export class RunViewBodies<T = string> {
  private readonly byRun = new Map<string, Remembered<T>>();
  private chars = 0;

  constructor(private readonly toAnswer: (json: string) => T = (json) => json as T) {}

  /** toAnswer(JSON.stringify(runView(run, live))), from memory when `run` reads as it did last time. */
  bodyOf(run: StoredRunViewRecord, live: { waiting?: RunWait } = {}): T {
    const known = this.byRun.get(run.id);
    if (known && sameWait(known.waiting, live.waiting) && sameStoredColumns(known.storedColumns, run.storedColumns)) return known.body;
    const json = JSON.stringify(runView(run, live));
    const body = this.toAnswer(json);
    if (known) this.forget(run.id, known);
    this.remember(run.id, { storedColumns: run.storedColumns, waiting: live.waiting, body, chars: entryChars(run.storedColumns, json, live.waiting) });
    return body;
  }

  /** Runs remembered now. */
  get size(): number {
    return this.byRun.size;
  }

  private remember(runId: string, entry: Remembered<T>): void {
    if (entry.chars > MAX_ENTRY_CHARS) return;
    // Map order is insertion order: the first entries are the runs read longest ago.
    for (const [oldest, old] of this.byRun) {
      if (this.chars + entry.chars <= MAX_CHARS) break;
      this.forget(oldest, old);
    }
    this.byRun.set(runId, entry);
    this.chars += entry.chars;
  }

  private forget(runId: string, entry: Remembered<T>): void {
    this.byRun.delete(runId);
    this.chars -= entry.chars;
  }
}

function sameWait(a: RunWait | undefined, b: RunWait | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.for === b.for && a.message === b.message);
}

function entryChars(storedColumns: readonly (string | null)[], json: string, waiting: RunWait | undefined): number {
  let chars = json.length + (waiting?.message.length ?? 0);
  for (const value of storedColumns) chars += value?.length ?? 0;
  return chars;
}
