/**
 * The store's SQL uses better-sqlite3's parameters: `?` in order, or `@name` bound from one object.
 * PostgreSQL takes `$1, $2, ...`. This rewrites the text once per statement and says how to order
 * the values; quoted strings, quoted identifiers and comments are left alone, and `::type` casts are
 * not parameters.
 */

export interface PostgresStatementText {
  text: string;
  /** For each `$n`, the index of a positional value or the name of a named one. */
  order: Array<number | string>;
}

export function toPostgresPlaceholders(sql: string): PostgresStatementText {
  const order: Array<number | string> = [];
  const named = new Map<string, number>();
  let positional = 0;
  let text = "";
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      const end = closingQuote(sql, i);
      text += sql.slice(i, end);
      i = end;
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end;
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (c === "?") {
      order.push(positional++);
      text += `$${order.length}`;
      i++;
    } else if (c === "@" && /[A-Za-z_]/.test(sql[i + 1] ?? "")) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))![0];
      let index = named.get(name);
      if (index === undefined) {
        order.push(name);
        named.set(name, (index = order.length));
      }
      text += `$${index}`;
      i += 1 + name.length;
    } else {
      text += c;
      i++;
    }
  }
  if (positional > 0 && named.size > 0) throw new Error(`a statement mixes ? and @name parameters; use one kind: ${sql.slice(0, 120)}`);
  return { text, order };
}

/** The values for `$1, $2, ...`, from the arguments a better-sqlite3 statement would take. */
export function bindValues(statement: PostgresStatementText, args: unknown[]): unknown[] {
  if (statement.order.length === 0) return [];
  const byName = typeof statement.order[0] === "string";
  if (byName) {
    const values = args[0];
    if (args.length !== 1 || typeof values !== "object" || values === null || Array.isArray(values)) {
      throw new TypeError("this statement takes named parameters: pass one object");
    }
    return statement.order.map((name) => {
      if (!(name as string in values)) throw new RangeError(`missing named parameter "${name as string}"`);
      return checked((values as Record<string, unknown>)[name as string]);
    });
  }
  const flat = args.length === 1 && Array.isArray(args[0]) ? args[0] : args;
  if (flat.length !== statement.order.length) {
    throw new RangeError(`this statement takes ${statement.order.length} parameters; got ${flat.length}`);
  }
  return flat.map(checked);
}

/** better-sqlite3 binds numbers, strings, bigints, buffers and null, and refuses anything else; so does this. */
function checked(value: unknown): unknown {
  if (value === null || typeof value === "number" || typeof value === "string" || typeof value === "bigint" || Buffer.isBuffer(value)) {
    return typeof value === "bigint" ? value.toString() : value;
  }
  throw new TypeError(`the store binds numbers, strings, bigints, buffers and null; got ${typeof value}`);
}

function closingQuote(sql: string, start: number): number {
  const quote = sql[start];
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2; // a doubled quote inside the literal
      else return i + 1;
    } else i++;
  }
  return sql.length;
}
