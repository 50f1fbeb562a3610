/** One line of the doctor's report, and how the report is printed and judged. */

export type Verdict = "PASS" | "WARN" | "FAIL";

export interface CheckResult {
  /** Short name of what was checked, e.g. "servo bus", "coordinator token". */
  name: string;
  verdict: Verdict;
  /** What was found, in a plain sentence. */
  sentence: string;
  /** What to do about it (WARN and FAIL). */
  fix?: string;
}

export const pass = (name: string, sentence: string): CheckResult => ({ name, verdict: "PASS", sentence });
export const warn = (name: string, sentence: string, fix?: string): CheckResult => ({ name, verdict: "WARN", sentence, ...(fix ? { fix } : {}) });
export const fail = (name: string, sentence: string, fix?: string): CheckResult => ({ name, verdict: "FAIL", sentence, ...(fix ? { fix } : {}) });

/** The report as a technician reads it: one block per check, then the verdict. */
export function formatReport(results: readonly CheckResult[]): string {
  const width = Math.max(...results.map((r) => r.name.length), 4);
  const lines = results.flatMap((r) => [
    `${r.verdict.padEnd(4)}  ${r.name.padEnd(width)}  ${r.sentence}`,
    ...(r.fix ? [`${" ".repeat(6 + width)}  -> ${r.fix}`] : []),
  ]);
  return [...lines, "", verdictLine(results)].join("\n");
}

export function verdictLine(results: readonly CheckResult[]): string {
  const failed = results.filter((r) => r.verdict === "FAIL").length;
  const warned = results.filter((r) => r.verdict === "WARN").length;
  if (failed) return `VERDICT: NOT READY: ${failed} check(s) failed${warned ? `, ${warned} warning(s)` : ""}. Fix the FAIL lines above and run the doctor again.`;
  if (warned) return `VERDICT: READY with ${warned} warning(s). The cell can work; read the WARN lines above.`;
  return "VERDICT: READY. Every check passed.";
}

/** 0 only when nothing failed. */
export function exitCodeOf(results: readonly CheckResult[]): number {
  return results.some((r) => r.verdict === "FAIL") ? 1 : 0;
}
