/**
 * Where a finished episode waits for a person's success label (tasks with `operator.success`): the
 * operator station's answer (OperatorAnswer action "label", detail `{"success", "progress", "note"}`)
 * resolves it; the label timeout, or an abort, ends the wait without a label (the episode is then
 * reported `unlabelled`).
 */
export interface OperatorLabel {
  success: boolean;
  /** 0-100, or null when the person gave none. */
  progress: number | null;
  note: string | null;
}

/** Reads the station's label answer; throws with a plain sentence when it is malformed. */
export function parseOperatorLabel(detail: string): OperatorLabel {
  let value: unknown;
  try {
    value = JSON.parse(detail);
  } catch {
    throw new Error(`the label is not JSON: ${JSON.stringify(detail.slice(0, 80))}`);
  }
  const v = value as Record<string, unknown>;
  if (typeof v !== "object" || v === null || typeof v.success !== "boolean") throw new Error(`the label needs "success": true or false; got ${JSON.stringify(detail.slice(0, 80))}`);
  const progress = v.progress === undefined || v.progress === null ? null : v.progress;
  if (progress !== null && !(typeof progress === "number" && progress >= 0 && progress <= 100)) throw new Error(`the label's progress must be 0-100; got ${JSON.stringify(progress)}`);
  return { success: v.success, progress, note: typeof v.note === "string" && v.note !== "" ? v.note.slice(0, 2000) : null };
}

export class LabelGate {
  private waiting: { episodeId: string; resolve: (label: OperatorLabel | null) => void } | undefined;

  /** Waits for the label of `episodeId`; null after `timeoutMs` or when `signal` aborts. */
  wait(episodeId: string, timeoutMs: number, signal: AbortSignal): Promise<OperatorLabel | null> {
    return new Promise((resolve) => {
      const finish = (label: OperatorLabel | null) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.waiting = undefined;
        resolve(label);
      };
      const onAbort = () => finish(null);
      const timer = setTimeout(() => finish(null), timeoutMs);
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting = { episodeId, resolve: finish };
      if (signal.aborted) finish(null);
    });
  }

  /** The episode whose label is awaited, if any. */
  get episodeId(): string | undefined {
    return this.waiting?.episodeId;
  }

  /** Gives the label; false when no label of that episode is awaited. */
  answer(episodeId: string, label: OperatorLabel): boolean {
    if (this.waiting?.episodeId !== episodeId) return false;
    this.waiting.resolve(label);
    return true;
  }
}
