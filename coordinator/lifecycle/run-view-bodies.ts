/**
 * The JSON text of a run's view (run-view.ts), remembered by run for as long as the run reads back
 * the same: GET /v1/runs/{run_id} reads the run from the store on every request, and when every
 * column the view is made from holds what it held last time (`storedText`, compared in full) and the
 * scheduler's `waiting` is the same, the view is the same text, so it is not parsed and serialised
 * again (issue 29). Nothing is invalidated: a write to the run, by this coordinator or another, on
 * either engine, changes what the next read returns, and that read makes a new text. At most
 * MAX_CHARS of stored and view text are kept; the runs read longest ago are dropped first.
 */
import type { StoredRunViewRecord } from "../store/runs-repo.js";
import { runView } from "./run-view.js";

/** Characters of stored and view text kept at most (two bytes each, at worst): a few thousand typical runs. */
const MAX_CHARS = 4_000_000;
/** A run whose texts are longer than this (a large Result) is served without being remembered. */
const MAX_ENTRY_CHARS = MAX_CHARS / 16;

interface Remembered {
  storedText: string;
  waiting: string | undefined;
  body: string;
}

export class RunViewBodies {
  private readonly byRun = new Map<string, Remembered>();
  private chars = 0;

  /** JSON.stringify(runView(run, live)), from memory when `run` reads as it did last time. */
  bodyOf(run: StoredRunViewRecord, live: { waiting?: string } = {}): string {
    const storedText = run.storedText;
    const known = this.byRun.get(run.id);
    if (known && known.storedText === storedText && known.waiting === live.waiting) return known.body;
    const body = JSON.stringify(runView(run, live));
    if (known) this.forget(run.id, known);
    this.remember(run.id, { storedText, waiting: live.waiting, body });
    return body;
  }

  /** Runs remembered now. */
  get size(): number {
    return this.byRun.size;
  }

  private remember(runId: string, entry: Remembered): void {
    const chars = entryChars(entry);
    if (chars > MAX_ENTRY_CHARS) return;
    // Map order is insertion order: the first entries are the runs read longest ago.
    for (const [oldest, old] of this.byRun) {
      if (this.chars + chars <= MAX_CHARS) break;
      this.forget(oldest, old);
    }
    this.byRun.set(runId, entry);
    this.chars += chars;
  }

  private forget(runId: string, entry: Remembered): void {
    this.byRun.delete(runId);
    this.chars -= entryChars(entry);
  }
}

function entryChars(entry: Remembered): number {
  return entry.storedText.length + entry.body.length + (entry.waiting?.length ?? 0);
}
