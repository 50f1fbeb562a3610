/**
 * Named JSON schemas: a zod schema registered here becomes `components/schemas/<id>` of the
 * OpenAPI document (coordinator/api/openapi.ts) and is referenced with `$ref` wherever it appears.
 * A leaf, so the run domain can declare its request shapes without importing the HTTP layer.
 */
import { z } from "zod";

/**
 * The schemas that become `components/schemas/<id>` in the OpenAPI document. A schema added here
 * is referenced with `$ref` wherever it appears; every other schema is inlined.
 */
export const componentRegistry = z.registry<{ id: string }>();

/** The registered components in registration order, `[id, schema]`. */
export const COMPONENTS: Array<[string, z.ZodType]> = [];

/** Registers `schema` as the OpenAPI component `id` and returns it. */
export function component<T extends z.ZodType>(id: string, schema: T): T {
  componentRegistry.add(schema, { id });
  COMPONENTS.push([id, schema]);
  return schema;
}
