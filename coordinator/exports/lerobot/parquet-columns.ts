/**
 * Parquet schema elements for the column types LeRobot's files hold, spelled the way pyarrow
 * writes them: every column nullable (Arrow fields are nullable by default), lists as the
 * three-level LIST group `<name>.list.element`, strings as UTF8 byte arrays.
 */
import type { SchemaElement } from "hyparquet-writer";

type Leaf = Pick<SchemaElement, "type" | "converted_type" | "logical_type">;

export const INT64: Leaf = { type: "INT64" };
export const FLOAT: Leaf = { type: "FLOAT" };
export const DOUBLE: Leaf = { type: "DOUBLE" };
export const BOOLEAN: Leaf = { type: "BOOLEAN" };
export const STRING: Leaf = { type: "BYTE_ARRAY", converted_type: "UTF8", logical_type: { type: "STRING" } };

/** A nullable column of `leaf` values. */
export function scalarColumn(name: string, leaf: Leaf): SchemaElement[] {
  return [{ name, ...leaf, repetition_type: "OPTIONAL" }];
}

/** A nullable column of lists (`depth` levels deep: 1 is `list<leaf>`, 3 is `list<list<list<leaf>>>`). */
export function listColumn(name: string, leaf: Leaf, depth = 1): SchemaElement[] {
  const elements: SchemaElement[] = [];
  let groupName = name;
  for (let level = 0; level < depth; level++) {
    elements.push({ name: groupName, repetition_type: "OPTIONAL", num_children: 1, converted_type: "LIST", logical_type: { type: "LIST" } });
    elements.push({ name: "list", repetition_type: "REPEATED", num_children: 1 });
    groupName = "element";
  }
  elements.push({ name: "element", ...leaf, repetition_type: "OPTIONAL" });
  return elements;
}

/** The schema of a file with these top-level columns (each from `scalarColumn` or `listColumn`). */
export function fileSchema(columns: SchemaElement[][]): SchemaElement[] {
  return [{ name: "schema", num_children: columns.length }, ...columns.flat()];
}
