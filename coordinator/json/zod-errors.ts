/**
 * A zod parse whose first problem becomes an AssayError with the spec's code (contract_validation_failed
 * unless told otherwise) and a message that names the field, says what is accepted and quotes the
 * offending value: `items[0].qty must be a positive integer; got 0`.
 *
 * Schemas word their own messages where today's wording matters (`{error: "..."}`); a message
 * starting with "must" is prefixed with the field path. Every other issue gets a generic message
 * here. A string, array or record over its bound (coordinator/json/field-bounds.ts) also gets its
 * size: `items[0].desc must be at most 2000 characters; got 900000 characters: "xxx..."` (the quote is
 * cut at 120 characters, each path segment at 64). Unknown fields read `unknown field <path>;
 * allowed: <keys>`. A leaf: the HTTP layer (coordinator/api/validate-request.ts) and the run domain
 * both use it.
 */
import { z } from "zod";
import { AssayError } from "../errors/assay-error.js";
import { boundedJson } from "./bounded-json.js";
import type { ErrorCode } from "../errors/codes.js";

export interface ParseOptions {
  /** Code of a failure; default contract_validation_failed. */
  code?: ErrorCode;
  /** Codes by top-level field, for a present but invalid value (e.g. robots -> firmware_pin_unavailable). */
  codeOfField?: Record<string, ErrorCode>;
  /** Prefix of the message, e.g. "query parameter " for query strings. */
  prefix?: string;
  /**
   * A missing top-level field: its code and message (a run body names the kind's mandatory fields
   * and keeps the field's code, e.g. a missing robot is firmware_pin_unavailable). Default: the
   * generic "<field> is required" with `code`.
   */
  missing?: (field: string) => { code: ErrorCode; message: string };
}

const quote = (value: unknown): string => boundedJson(value, 120);

/** Longest name of one path segment in a message; a longer key (an unknown field, a record key) is cut with "...". */
const SEGMENT_MAX_CHARS = 64;

/** `items[0].qty` from `["items", 0, "qty"]`; each name cut at 64 characters, so a message stays small. */
export function pathText(path: readonly PropertyKey[]): string {
  let text = "";
  for (const part of path) {
    const name = String(part);
    text += typeof part === "number" ? `[${part}]` : `${text ? "." : ""}${name.length > SEGMENT_MAX_CHARS ? `${name.slice(0, SEGMENT_MAX_CHARS)}...` : name}`;
  }
  return text;
}

const article = (type: string): string => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/** A message for an issue the schema did not word itself (zod's per-parse error map). */
function genericMessage(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return issue.input === undefined ? "is required" : `must be ${issue.expected === "array" || issue.expected === "object" ? article(issue.expected) : article(String(issue.expected))}`;
    case "invalid_value":
      return issue.values.length === 1 ? `must be ${quote(issue.values[0])}` : `must be one of ${issue.values.map((v) => (typeof v === "string" ? v : quote(v))).join(", ")}`;
    case "too_small": {
      const bound = Number(issue.minimum);
      if (issue.origin === "string") return `must be at least ${bound} character${bound === 1 ? "" : "s"}`;
      if (issue.origin === "array" || issue.origin === "set") return `must have at least ${bound} item${bound === 1 ? "" : "s"}`;
      return `must be ${issue.inclusive ? ">=" : ">"} ${bound}`;
    }
    case "too_big": {
      const bound = Number(issue.maximum);
      if (issue.origin === "string") return `must be at most ${bound} characters`;
      if (issue.origin === "array" || issue.origin === "set") return `must have at most ${bound} items`;
      return `must be ${issue.inclusive ? "<=" : "<"} ${bound}`;
    }
    case "invalid_format":
      return issue.format === "regex" ? `must match ${String((issue as { pattern?: string }).pattern)}` : `must be a valid ${issue.format}`;
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}`;
    case "invalid_union": {
      const options = (issue as { options?: unknown[] }).options;
      if (options) return `must be one of ${options.filter((o) => o !== undefined).map(String).join(", ")}`;
      return "matches none of the accepted shapes";
    }
    case "invalid_key":
      return "has an invalid key";
    case "invalid_element":
      return "has an invalid element";
    default:
      return "is invalid";
  }
}

/** The keys an object schema at `path` of `schema` accepts (for unknown-field messages). */
function allowedKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let current: z.core.$ZodType | undefined = schema;
  const unwrap = (s: z.core.$ZodType | undefined): z.core.$ZodType | undefined => {
    let node = s;
    for (let i = 0; node && i < 10; i++) {
      const def = node._zod.def as { type: string; innerType?: z.core.$ZodType; in?: z.core.$ZodType; out?: z.core.$ZodType };
      if (def.innerType) node = def.innerType;
      else if (def.type === "pipe") node = def.in;
      else break;
    }
    return node;
  };
  for (const part of path) {
    current = unwrap(current);
    const def = current?._zod.def as { type: string; shape?: Record<string, z.core.$ZodType>; element?: z.core.$ZodType; valueType?: z.core.$ZodType; items?: z.core.$ZodType[] } | undefined;
    if (!def) return [];
    if (def.type === "object" && def.shape) current = def.shape[String(part)];
    else if (def.type === "array") current = def.element;
    else if (def.type === "record") current = def.valueType;
    else if (def.type === "tuple" && typeof part === "number") current = def.items?.[part];
    else return [];
  }
  const def = unwrap(current)?._zod.def as { type: string; shape?: Record<string, unknown> } | undefined;
  return def?.type === "object" && def.shape ? Object.keys(def.shape) : [];
}

/** The offending value of an issue: the input, or for a discriminator the field of the input. */
function offending(issue: z.core.$ZodIssue): unknown {
  const raw = issue as { input?: unknown; discriminator?: string; code: string };
  if (raw.code === "invalid_union" && raw.discriminator && typeof raw.input === "object" && raw.input !== null) {
    return (raw.input as Record<string, unknown>)[raw.discriminator];
  }
  return raw.input;
}

/** For a value over its bound, its size ("900000 characters: "), so the message names both length and limit. */
function sizeOf(issue: z.core.$ZodIssue): string {
  const input = (issue as { input?: unknown }).input;
  if (issue.code === "custom" && issue.params?.bound === "entries" && typeof input === "object" && input !== null) return `${Object.keys(input).length} entries: `;
  if (issue.code !== "too_big") return "";
  if (typeof input === "string") return `${input.length} characters: `;
  if (Array.isArray(input)) return `${input.length} items: `;
  return "";
}

/** The message of one issue, as the module comment describes. */
export function describeIssue(schema: z.ZodType, issue: z.core.$ZodIssue, prefix = ""): string {
  const where = `${prefix}${pathText(issue.path)}`;
  if (issue.code === "unrecognized_keys") {
    const allowed = allowedKeys(schema, issue.path);
    const field = pathText([...issue.path, issue.keys[0]!]);
    return `unknown field ${prefix}${field}${allowed.length ? `; allowed: ${allowed.join(", ")}` : ""}`;
  }
  if (issue.code === "invalid_key" && issue.issues[0]?.code === "too_big") {
    const key = String((issue as { input?: unknown }).input);
    const record = `${prefix}${pathText(issue.path[issue.path.length - 1] === key ? issue.path.slice(0, -1) : issue.path)}`;
    return `${record ? `${record}: ` : ""}a key must be at most ${Number(issue.issues[0].maximum)} characters; got ${key.length} characters: ${quote(key)}`;
  }
  let message = issue.message;
  if (message.startsWith("must") || message.startsWith("is required") || message.startsWith("matches") || message.startsWith("has ")) {
    message = where ? `${where} ${message}` : `request body ${message}`;
  }
  return `${message}; got ${sizeOf(issue)}${quote(offending(issue))}`;
}

/** Unknown fields first (today's handlers reject those before looking at values), then in schema order. */
function firstIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue {
  return issues.find((issue) => issue.code === "unrecognized_keys") ?? issues[0]!;
}

/** Parses `value` with `schema`; throws the AssayError of the first issue. */
export function parseWith<T extends z.ZodType>(schema: T, value: unknown, options: ParseOptions = {}): z.output<T> {
  const result = schema.safeParse(value, { reportInput: true, error: (issue) => genericMessage(issue) });
  if (result.success) return result.data;
  const issue = firstIssue(result.error.issues);
  const head = issue.path[0];
  if (options.missing && issue.path.length === 1 && typeof head === "string" && (issue as { input?: unknown }).input === undefined
      && (issue.code === "invalid_type" || issue.code === "invalid_union")) {
    const { code, message } = options.missing(head);
    throw new AssayError(code, message);
  }
  const fieldCode = typeof head === "string" && (issue as { input?: unknown }).input !== undefined ? options.codeOfField?.[head] : undefined;
  throw new AssayError(fieldCode ?? options.code ?? "contract_validation_failed", describeIssue(schema, issue, options.prefix));
}
