import assert from "node:assert/strict";
import { buildOpenApiDocument } from "../../coordinator/api/openapi.js";
import { CreateKitRequest } from "../../coordinator/api/schemas/kits.js";
import { RunBody } from "../../coordinator/api/schemas/run-request.js";
import { AssayError } from "../../coordinator/errors/assay-error.js";
import { INSTRUCTION_MAX_CHARS, TEXT_MAX_CHARS } from "../../coordinator/json/field-bounds.js";
import { parseWith } from "../../coordinator/json/zod-errors.js";
import { CreateTaskRequest } from "../../coordinator/tasks/task-schemas.js";
import { README_RUN_BODY } from "../fixtures.js";

type Schema = Record<string, any>;

/**
 * Every string, array and string-keyed object a request may carry (query parameters and JSON bodies
 * of every operation), as `where: what` for each one without a bound in the OpenAPI document.
 */
function unboundedRequestFields(): string[] {
  const doc = buildOpenApiDocument();
  const components = doc.components.schemas as Record<string, Schema>;
  const seen = new Set<string>();
  const unbounded: string[] = [];
  const walk = (schema: Schema | undefined, where: string): void => {
    if (!schema || typeof schema !== "object") return;
    if (typeof schema.$ref === "string") {
      const id = schema.$ref.split("/").pop()!;
      if (seen.has(id)) return;
      seen.add(id);
      walk(components[id], `#/components/schemas/${id}`);
      return;
    }
    const types: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    const fixed = schema.enum !== undefined || schema.const !== undefined || schema.format === "date-time";
    if (types.includes("string") && !fixed && schema.maxLength === undefined) unbounded.push(`${where}: string without maxLength`);
    if (types.includes("array") && schema.maxItems === undefined && !schema.prefixItems) unbounded.push(`${where}: array without maxItems`);
    const open = typeof schema.additionalProperties === "object";
    if (open && schema.maxProperties === undefined) unbounded.push(`${where}: object without maxProperties`);
    for (const [name, property] of Object.entries<Schema>(schema.properties ?? {})) walk(property, `${where}.${name}`);
    walk(schema.items, `${where}[]`);
    for (const [i, item] of (schema.prefixItems ?? []).entries()) walk(item, `${where}[${i}]`);
    if (open) {
      walk(schema.additionalProperties, `${where}{value}`);
      walk(schema.propertyNames ?? { type: "string" }, `${where}{key}`);
    }
    for (const combinator of ["anyOf", "oneOf", "allOf"]) for (const [i, branch] of (schema[combinator] ?? []).entries()) walk(branch, `${where}(${combinator} ${i})`);
  };
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries<Schema>(operations)) {
      for (const parameter of operation.parameters ?? []) if (parameter.in === "query") walk(parameter.schema, `${method.toUpperCase()} ${path} ?${parameter.name}`);
      walk(operation.requestBody?.content?.["application/json"]?.schema, `${method.toUpperCase()} ${path} body`);
    }
  }
  return unbounded;
}

function refusal(schema: Parameters<typeof parseWith>[0], value: unknown): AssayError {
  try {
    parseWith(schema, value);
  } catch (error) {
    assert.ok(error instanceof AssayError);
    return error;
  }
  assert.fail("the value was accepted");
}

describe("request bounds (docs/api.md, Bounds)", () => {
  it("every request string, array and object of the OpenAPI document has a bound", () => {
    assert.deepEqual(unboundedRequestFields(), []);
  });

  it("an over-long field is refused naming the field, its length and the limit, with a short quote", () => {
    const error = refusal(CreateKitRequest, { name: "mugs", items: [{ desc: "x".repeat(900_000), qty: 1 }] });
    assert.equal(error.code, "contract_validation_failed");
    assert.match(error.message, new RegExp(`^items\\[0\\]\\.desc must be at most ${TEXT_MAX_CHARS} characters; got 900000 characters: "x+`));
    assert.ok(error.message.length < 300, `message of ${error.message.length} characters`);
  });

  it("too many items, entries or an over-long key are refused with their counts", () => {
    const many = refusal(CreateKitRequest, { name: "mugs", items: Array.from({ length: 101 }, () => ({ desc: "mug", qty: 1 })) });
    assert.match(many.message, /^items must have at most 100 lines .*; got 101 items: /);
    const task = (extra: object) => ({ name: "t", initial_conditions: { cube: { object: "cube", pose: [0, 0, 0, 0] } }, success_predicates: [{ up: "pose(cube).z > 0.05" }], ...extra });
    const longKey = refusal(CreateTaskRequest, task({ initial_conditions: { ["k".repeat(5000)]: { object: "cube", pose: [0, 0, 0, 0] } } }));
    assert.match(longKey.message, /^initial_conditions: a key must be at most 64 characters; got 5000 characters: "k+\.\.\.$/);
    const entries = refusal(CreateTaskRequest, task({ stages: [Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`s${i}`, "pose(cube).z > 0.05"]))] }));
    assert.match(entries.message, /^stages\[0\] must have at most 32 entries; got 40 entries: /);
    const instruction = refusal(CreateTaskRequest, task({ instructions: { sampled_per_episode: ["pick it up", "y".repeat(INSTRUCTION_MAX_CHARS + 1)] } }));
    assert.match(instruction.message, new RegExp(`^instructions\\.sampled_per_episode\\[1\\] must be at most ${INSTRUCTION_MAX_CHARS} characters; got ${INSTRUCTION_MAX_CHARS + 1} characters`));
  });

  it("an unknown field with a huge name is quoted short", () => {
    const error = refusal(CreateKitRequest, { name: "mugs", items: [{ desc: "mug", qty: 1 }], ["z".repeat(100_000)]: 1 });
    assert.ok(error.message.length < 1000, `message of ${error.message.length} characters`);
  });

  it("legal values at the limit pass", () => {
    parseWith(CreateKitRequest, { name: "mugs", items: Array.from({ length: 100 }, () => ({ desc: "m".repeat(TEXT_MAX_CHARS), qty: 1 })) });
    parseWith(RunBody, README_RUN_BODY);
  });
});
