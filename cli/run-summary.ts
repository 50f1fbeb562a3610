/** How a Run reads for people: one line for lists and submissions, a block for `runs get`, the end state of a watch. */
import { fields, localTime, resultLine, usd } from "./human-format.js";

// The Run as the API shows it; kinds add fields this code does not need.
export interface Run {
  id: string;
  kind: string;
  status: string;
  created: string;
  completed?: string;
  robot?: string;
  robots?: string[];
  environment?: string;
  task?: string;
  policy?: { type?: string; image?: string; hf?: string; url?: string };
  policies?: Record<string, unknown>;
  episodes?: number | string;
  priority?: string;
  resolved_pins?: { robot?: string; environment?: string; task?: string };
  result?: Record<string, unknown> & { n?: number; success_rate?: number; ci95?: [number, number]; interval_method?: string; cost_usd?: number };
  status_detail?: { code: string | null; message: string };
  name?: string | null;
  metadata?: Record<string, string>;
  /** The name the policy is shown under (kinds with one policy). */
  policy_name?: string;
  units?: Array<{ policy_name?: string }>;
}

/** The policy as lists name it: policy_name, or a compare's policy names (`expert vs novice`). */
export function policyNameOf(run: Run): string {
  if (run.policy_name) return run.policy_name;
  const names = (run.units ?? []).map((u) => u.policy_name).filter((n): n is string => typeof n === "string");
  return names.length ? [...new Set(names)].join(" vs ") : "-";
}

export const TERMINAL_STATUSES: readonly string[] = ["completed", "failed", "stopped"];

/** `container assay/ref-policy:expert`, `checkpoint acme/pick (onnx)`, `endpoint ws://...`; compare: the names. */
export function policyLine(run: Run): string {
  if (run.policies) return `policies ${Object.keys(run.policies).join(", ")}`;
  const p = run.policy;
  if (!p) return "-";
  const what = p.image ?? p.hf ?? p.url;
  return what ? `${p.type} ${what}` : String(p.type ?? "-");
}

/** `pick-cube@v1 on so101@3.11 in tabletop@1` from the resolved pins (the submitted names before they resolve). */
export function pinsLine(run: Run): string {
  const pins = run.resolved_pins ?? {};
  const robot = pins.robot ?? run.robot ?? run.robots?.join(", ") ?? "-";
  return `${pins.task ?? run.task ?? "-"} on ${robot} in ${pins.environment ?? run.environment ?? "-"}`;
}

/** `stopped: cancelled on request (key key_...) [code]`. */
export function statusDetailLine(run: Run): string | undefined {
  const detail = run.status_detail;
  if (!detail) return undefined;
  return `${detail.message}${detail.code ? ` (${detail.code})` : ""}`;
}

/** The headline in words as the coordinator wrote it (result.cells.statement), the console's and the PDF's sentences. */
export function statementLines(result: Run["result"]): string[] {
  const statement = (result?.cells as { statement?: unknown } | undefined)?.statement;
  return Array.isArray(statement) ? statement.filter((line): line is string => typeof line === "string") : [];
}

/** A compare's or transfer's answer up front (result.headline, coordinator/runs/compare-headline.ts), as every surface prints it. */
export interface CompareHeadline {
  difference: { of: string; diff: number; ci: [number, number]; ci_level: number };
  arms: Array<{ label: string }>;
  lines: string[];
}

/** The headline of a compare or transfer, when its Result has one. */
export function compareHeadlineOf(result: Run["result"]): CompareHeadline | undefined {
  const headline = result?.headline as CompareHeadline | undefined;
  return headline && Array.isArray(headline.lines) && headline.difference ? headline : undefined;
}

const signedPoints = (x: number) => `${x > 0 ? "+" : ""}${Number((x * 100).toFixed(1))}`;

/** `expert - novice: +30 points (95% interval +12 to +46)`. */
export function differenceLine(headline: CompareHeadline): string {
  const { of, diff, ci, ci_level: level } = headline.difference;
  return `${of}: ${signedPoints(diff)} points (${Number((level * 100).toFixed(1))}% interval ${signedPoints(ci[0])} to ${signedPoints(ci[1])})`;
}

/** The `runs get` block: fields, then the headline's sentences (a compare's or transfer's difference first). */
export function runBlock(run: Run): string {
  const pins = run.resolved_pins ?? {};
  const robot = run.robot && pins.robot && run.robot !== pins.robot ? `${run.robot} (resolved ${pins.robot})` : (pins.robot ?? run.robot ?? run.robots?.join(", "));
  const result = run.result;
  const headline = compareHeadlineOf(result);
  return fields([
    ["run", `${run.id} (${run.kind})`],
    ["name", run.name ?? undefined],
    ["status", run.status],
    ["detail", statusDetailLine(run)],
    ["created", localTime(run.created)],
    ["completed", run.completed ? localTime(run.completed) : undefined],
    ["robot", robot],
    ["environment", pins.environment ?? run.environment],
    ["task", pins.task ?? run.task],
    ["policy", policyLine(run)],
    ["policy name", policyNameOf(run) === "-" ? undefined : policyNameOf(run)],
    ["metadata", Object.keys(run.metadata ?? {}).length ? Object.entries(run.metadata!).map(([key, value]) => `${key}=${value}`).join(", ") : undefined],
    ["episodes", run.episodes === undefined ? undefined : String(run.episodes)],
    ["priority", run.priority],
    ["result", result ? `${headline ? differenceLine(headline) : resultLine(result)}${run.status === "completed" ? "" : " (partial: the episodes that ran)"}` : undefined],
    ["cost", result && typeof result.cost_usd === "number" ? usd(result.cost_usd) : undefined],
  ]) + [
    ...(headline?.lines ?? []),
    // Without a headline the statement is the run's; with one it is the first side's alone.
    ...(headline && statementLines(result).length ? [`${headline.arms[0]?.label ?? "the first side"} alone:`] : []),
    ...statementLines(result),
  ].map((line) => `\n${line}`).join("");
}

/** What a watch ends with: the final state in one or two lines. */
export function endStateLines(run: Run): string[] {
  if (run.status === "completed") {
    const result = run.result ?? {};
    const cost = typeof result.cost_usd === "number" ? `, cost ${usd(result.cost_usd)}` : "";
    const headline = compareHeadlineOf(result);
    return [`${run.id} completed: ${headline ? differenceLine(headline) : resultLine(result)}${cost}`, ...(headline?.lines ?? []), ...statementLines(result)];
  }
  const lines = [`${run.id} ${run.status}: ${statusDetailLine(run) ?? "no detail given"}`];
  if (run.result) lines.push(`partial result: ${resultLine(run.result)}`, ...statementLines(run.result));
  return lines;
}
