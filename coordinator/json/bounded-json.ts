/**
 * Quoting a request's value in an error message without trusting its size or depth: JSON as
 * `JSON.stringify` writes it, cut at `maxChars` (ending "...") and at `maxDepth` levels of nesting
 * (deeper arrays and objects read `[...]` and `{...}`). A 20,000-deep array costs a few
 * characters, never the stack. And the depth of a parsed body, measured without recursion.
 */

const DEFAULT_MAX_CHARS = 120;
const DEFAULT_MAX_DEPTH = 4;

export function boundedJson(value: unknown, maxChars = DEFAULT_MAX_CHARS, maxDepth = DEFAULT_MAX_DEPTH): string {
  let out = "";
  const full = () => out.length > maxChars;
  const write = (value: unknown, depth: number): void => {
    if (full()) return;
    if (value === undefined) {
      out += "undefined";
    } else if (value === null || typeof value !== "object") {
      out += typeof value === "bigint" ? String(value) : (JSON.stringify(value) ?? String(value));
    } else if (Array.isArray(value)) {
      if (depth >= maxDepth) {
        out += "[...]";
        return;
      }
      out += "[";
      for (let i = 0; i < value.length && !full(); i++) {
        if (i > 0) out += ",";
        write(value[i] === undefined ? null : value[i], depth + 1);
      }
      out += "]";
    } else {
      if (depth >= maxDepth) {
        out += "{...}";
        return;
      }
      out += "{";
      let first = true;
      for (const key of Object.keys(value)) {
        if (full()) break;
        const item = (value as Record<string, unknown>)[key];
        if (item === undefined) continue;
        if (!first) out += ",";
        first = false;
        out += `${JSON.stringify(key)}:`;
        write(item, depth + 1);
      }
      out += "}";
    }
  };
  write(value, 0);
  return out.length > maxChars ? `${out.slice(0, maxChars - 3)}...` : out;
}

/** How deeply arrays and objects nest in `value` (a scalar is 0), walked with an explicit stack. */
export function jsonDepth(value: unknown, stopAbove = Infinity): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > stopAbove) return deepest;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, here]);
  }
  return deepest;
}
