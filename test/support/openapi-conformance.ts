/**
 * Checks real HTTP responses against the OpenAPI document with ajv (an independent JSON Schema
 * validator, not zod): the concrete path is mapped to its path template, the status must be one the
 * operation declares, a JSON body must validate against that response's schema, and an error body
 * must be the envelope with a code the operation declares (`x-assay-error-codes`) and whose status
 * matches the code table.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import { ERROR_CODES, isErrorCode } from "../../coordinator/errors/codes.js";

type Json = Record<string, any>;

/** One response as a client saw it. */
export interface RecordedResponse {
  method: string;
  /** Path without the query string, e.g. `/v1/runs/run_x`. */
  path: string;
  query: string;
  status: number;
  contentType: string | null;
  /** The parsed body of a JSON response; undefined otherwise. */
  body?: unknown;
  /** Which test made the request, for the failure list. */
  test?: string;
}

const addFormats = formats.default;
const DOC_ID = "https://assay.invalid/openapi.json";
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

interface Template {
  path: string;
  pattern: RegExp;
  params: number;
}

export class OpenApiConformance {
  private readonly ajv: Ajv2020;
  private readonly templates: Template[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Json) {
    // Compiling is most of what the check costs a test process (each response schema once): a component
    // schema referenced from many responses is compiled once and called (inlineRefs: false), not inlined
    // into each, and ajv's name-counting optimization pass is skipped (it was half the compile time). The
    // code validates the same; all 640 schemas of the document: 6.9-7.5 -> 2.8 s of CPU.
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, inlineRefs: false, code: { optimize: false } });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
    this.templates = Object.keys(doc.paths).map((path) => ({
      path,
      params: (path.match(/\{/g) ?? []).length,
      pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}/?$`),
    }));
  }

  /** The path template a concrete path belongs to (literal segments win over parameters). */
  templateOf(method: string, path: string): string | undefined {
    return this.templates
      .filter((t) => t.pattern.test(path) && this.doc.paths[t.path][method.toLowerCase()])
      .sort((a, b) => a.params - b.params)[0]?.path;
  }

  /** Compiles (once) the schema at a JSON pointer of the document. */
  private validator(ref: string): ValidateFunction {
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOC_ID}#${ref}` });
      this.validators.set(ref, validate);
    }
    return validate;
  }

  /** Compiles every response and request schema of the document; throws on a schema ajv rejects. */
  compileAll(): number {
    let count = 0;
    for (const [path, item] of Object.entries<Json>(this.doc.paths)) {
      for (const [method, op] of Object.entries<Json>(item)) {
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          if (response.content?.["application/json"]) { this.validator(`/${pointer("paths", path, method, "responses", status, "content", "application/json", "schema")}`); count++; }
        }
        // Only JSON bodies have a schema to compile (a model's bytes are application/octet-stream).
        if (op.requestBody?.content?.["application/json"]) { this.validator(`/${pointer("paths", path, method, "requestBody", "content", "application/json", "schema")}`); count++; }
      }
    }
    for (const name of Object.keys(this.doc.components.schemas)) { this.validator(`/${pointer("components", "schemas", name)}`); count++; }
    return count;
  }

  /** Problems with one response; empty when it conforms. */
  check(r: RecordedResponse): string[] {
    const where = `${r.method} ${r.path}${r.query} -> ${r.status}${r.test ? ` (${r.test})` : ""}`;
    const template = this.templateOf(r.method, r.path);
    const isJson = (r.contentType ?? "").startsWith("application/json");
    if (!template) {
      // Not a documented route: only the 404 not_found of an unknown endpoint is acceptable.
      if (r.status === 404 && isJson && (r.body as Json)?.error?.code === "not_found") return this.validate("/components/schemas/Error", r.body, where);
      return [`${where}: no operation ${r.method} for this path in the document`];
    }
    const op = this.doc.paths[template][r.method.toLowerCase()] as Json;
    const response = op.responses[String(r.status)] as Json | undefined;
    if (!response) return [`${where}: ${template} declares no ${r.status} response (declared: ${Object.keys(op.responses).join(", ")})`];
    const problems: string[] = [];
    if (r.status >= 400) {
      if (!isJson) return [`${where}: an error response must be application/json; got ${r.contentType}`];
      problems.push(...this.validate("/components/schemas/Error", r.body, where));
      const code = (r.body as Json)?.error?.code as string | undefined;
      if (code !== undefined) {
        if (!(op["x-assay-error-codes"] as string[]).includes(code)) problems.push(`${where}: error.code ${code} is not in ${template}'s x-assay-error-codes (${op["x-assay-error-codes"].join(", ")})`);
        const declaredOverride = (op["x-assay-status-overrides"] as Record<string, string> | undefined)?.[String(r.status)] === code;
        if (isErrorCode(code) && ERROR_CODES[code].status !== r.status && !declaredOverride) problems.push(`${where}: error.code ${code} is HTTP ${ERROR_CODES[code].status} in the code table`);
      }
      return problems;
    }
    // A 304 (a conditional GET whose ETag matched) has no body by definition (RFC 9110, 15.4.5).
    if (r.status === 304) return problems;
    const mediaType = (r.contentType ?? "").split(";")[0]!.trim();
    if (!response.content?.[mediaType]) return [`${where}: ${template} ${r.status} declares ${Object.keys(response.content ?? {}).join(", ")}; got ${mediaType}`];
    if (mediaType === "application/json" && response.content[mediaType].schema && template !== "/v1/openapi.json") {
      problems.push(...this.validate(`/${pointer("paths", template, r.method.toLowerCase(), "responses", String(r.status), "content", "application/json", "schema")}`, r.body, where));
    }
    return problems;
  }

  private validate(ref: string, body: unknown, where: string): string[] {
    const validate = this.validator(ref);
    if (validate(body)) return [];
    return (validate.errors ?? []).slice(0, 3).map((e) => `${where}: body${e.instancePath} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`);
  }
}
