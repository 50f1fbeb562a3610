/**
 * Recursive-descent parser for predicate expressions (grammar: docs/predicates.md). Types are
 * checked while parsing, so a parsed `Predicate` is a boolean condition whose comparisons and
 * arithmetic only ever see numbers.
 */
import type { ArithmeticOp, BooleanExpr, ComparisonOp, Expr, NumericExpr, PoseAxis, Predicate } from "./ast.js";
import { isNumeric } from "./ast.js";
import { PredicateSyntaxError } from "./errors.js";
import { Lexer, describeToken, type Token } from "./lexer.js";

/** Functions, each followed by parenthesized arguments. */
export const KNOWN_FUNCTIONS = ["distance", "event", "height", "initial", "joint", "pose"] as const;
/** Signals written without arguments. */
export const KNOWN_SIGNALS = ["ft.force", "ft.force_z", "ft.torque", "gripper.holding", "gripper.opening", "operator.success", "time"] as const;

const POSE_AXES: readonly PoseAxis[] = ["x", "y", "z", "yaw"];
const COMPARISON_OPS: ReadonlySet<string> = new Set(["<", "<=", ">", ">=", "==", "!="]);
const KEYWORDS: ReadonlySet<string> = new Set(["and", "or", "not", "for", "within", "true", "false"]);
type MemberSignalKind = "gripper_opening" | "gripper_holding" | "operator_success" | "ft_force" | "ft_force_z" | "ft_torque";
/** Signals reached through a `<group>.<field>` pair, and what each field parses to. */
const MEMBER_SIGNALS: Record<string, Record<string, MemberSignalKind>> = {
  gripper: { opening: "gripper_opening", holding: "gripper_holding" },
  ft: { force: "ft_force", force_z: "ft_force_z", torque: "ft_torque" },
  operator: { success: "operator_success" },
};

/** Parses one predicate expression; throws `PredicateSyntaxError` with the offending position. */
export function parsePredicate(source: string): Predicate {
  return new Parser(source).parsePredicate();
}

class Parser {
  private readonly lexer: Lexer;
  /** End offset of the last token consumed by `expectOperator`. */
  private lastEnd = 0;

  constructor(private readonly source: string) {
    this.lexer = new Lexer(source);
  }

  parsePredicate(): Predicate {
    const condition = this.boolean(this.parseOr(), "the predicate");
    const predicate: Predicate = { source: this.source, condition };
    for (;;) {
      const token = this.lexer.peek();
      if (token.kind !== "identifier" || (token.text !== "for" && token.text !== "within")) break;
      const key = token.text === "for" ? "forS" : "withinS";
      if (predicate[key] !== undefined) {
        throw this.error(token, this.expectedAfterCondition(predicate), { note: `a predicate takes "${token.text}" at most once` });
      }
      this.lexer.next();
      predicate[key] = this.parseDuration();
    }
    const end = this.lexer.peek();
    if (end.kind !== "end") {
      const note = COMPARISON_OPS.has(end.text) ? 'comparisons do not chain; write "a < b and b < c"' : undefined;
      throw this.error(end, this.expectedAfterCondition(predicate), { note });
    }
    return predicate;
  }

  private expectedAfterCondition(predicate: Predicate): string {
    const options = ['"and"', '"or"'];
    if (predicate.forS === undefined) options.push('"for"');
    if (predicate.withinS === undefined) options.push('"within"');
    return `expected ${options.join(", ")} or end of expression`;
  }

  private parseDuration(): number {
    const token = this.lexer.next();
    if (token.kind !== "number" || token.unit?.dimension !== "time") {
      throw this.error(token, 'expected a duration with a time unit, like "1.5s" or "200ms"');
    }
    return token.value!;
  }

  private parseOr(): Expr {
    let left = this.parseAnd();
    while (this.atKeyword("or")) {
      this.lexer.next();
      const right = this.parseAnd();
      left = this.logical("or", left, right);
    }
    return left;
  }

  private parseAnd(): Expr {
    let left = this.parseNot();
    while (this.atKeyword("and")) {
      this.lexer.next();
      const right = this.parseNot();
      left = this.logical("and", left, right);
    }
    return left;
  }

  private logical(kind: "and" | "or", left: Expr, right: Expr): BooleanExpr {
    const operand = `"${kind}"`;
    return { kind, left: this.boolean(left, operand), right: this.boolean(right, operand), start: left.start, end: right.end };
  }

  private parseNot(): Expr {
    if (!this.atKeyword("not")) return this.parseComparison();
    const start = this.lexer.next().start;
    const operand = this.boolean(this.parseNot(), '"not"');
    return { kind: "not", operand, start, end: operand.end };
  }

  private parseComparison(): Expr {
    const left = this.parseAdditive();
    const token = this.lexer.peek();
    if (token.kind !== "operator" || !COMPARISON_OPS.has(token.text)) return left;
    this.lexer.next();
    const op = token.text as ComparisonOp;
    const right = this.parseAdditive();
    const side = `"${op}"`;
    const [l, r] = [this.numeric(left, side), this.numeric(right, side)];
    return { kind: "compare", op, left: l, right: r, start: left.start, end: right.end };
  }

  private parseAdditive(): Expr {
    let left = this.parseMultiplicative();
    while (this.atOperator("+", "-")) {
      const op = this.lexer.next().text as ArithmeticOp;
      left = this.arithmetic(op, left, this.parseMultiplicative());
    }
    return left;
  }

  private parseMultiplicative(): Expr {
    let left = this.parseUnary();
    while (this.atOperator("*", "/")) {
      const op = this.lexer.next().text as ArithmeticOp;
      left = this.arithmetic(op, left, this.parseUnary());
    }
    return left;
  }

  private arithmetic(op: ArithmeticOp, left: Expr, right: Expr): NumericExpr {
    const side = `"${op}"`;
    const [l, r] = [this.numeric(left, side), this.numeric(right, side)];
    return { kind: "arithmetic", op, left: l, right: r, start: left.start, end: right.end };
  }

  private parseUnary(): Expr {
    if (!this.atOperator("-")) return this.parsePrimary();
    const start = this.lexer.next().start;
    const operand = this.numeric(this.parseUnary(), '"-"');
    return { kind: "negate", operand, start, end: operand.end };
  }

  private parsePrimary(): Expr {
    const token = this.lexer.peek();
    if (token.kind === "number") {
      this.lexer.next();
      return { kind: "number", value: token.value!, start: token.start, end: token.end };
    }
    if (token.kind === "operator" && token.text === "(") {
      this.lexer.next();
      const inner = this.parseOr();
      this.expectOperator(")");
      // The parentheses belong to the sub-expression, so error quotes include them.
      return { ...inner, start: token.start, end: this.lastEnd };
    }
    if (token.kind === "identifier" && !KEYWORDS.has(token.text)) {
      this.lexer.next();
      return this.parseSignal(token);
    }
    if (token.kind === "identifier" && (token.text === "true" || token.text === "false")) {
      this.lexer.next();
      return { kind: "boolean", value: token.text === "true", start: token.start, end: token.end };
    }
    throw this.error(token, 'expected a number, a signal, "(", "-" or "not"');
  }

  private parseSignal(identifier: Token): Expr {
    const { start } = identifier;
    switch (identifier.text) {
      case "time":
        return { kind: "time", start, end: identifier.end };
      case "pose": {
        const object = this.parseNameArguments(identifier, 1)[0]!;
        this.expectOperator(".", `after "pose(${object})"`);
        const axisToken = this.lexer.next();
        const axis = POSE_AXES.find((candidate) => candidate === axisToken.text);
        if (axisToken.kind !== "identifier" || axis === undefined) {
          const known = POSE_AXES.map((a) => `.${a}`);
          throw this.error(axisToken, `expected one of ${known.join(", ")} after "pose(${object})"`, { knownNames: known });
        }
        return { kind: "pose", object, axis, start, end: axisToken.end };
      }
      case "height": {
        const [object] = this.parseNameArguments(identifier, 1);
        return { kind: "pose", object: object!, axis: "z", start, end: this.lastEnd };
      }
      case "distance": {
        const [a, b] = this.parseNameArguments(identifier, 2);
        return { kind: "distance", a: a!, b: b!, start, end: this.lastEnd };
      }
      case "joint": {
        const [joint] = this.parseNameArguments(identifier, 1);
        return { kind: "joint", joint: joint!, start, end: this.lastEnd };
      }
      case "event": {
        const [event] = this.parseNameArguments(identifier, 1);
        return { kind: "event", event: event!, start, end: this.lastEnd };
      }
      case "initial": {
        this.expectOperator("(", 'after "initial"');
        const operand = this.numeric(this.parseOr(), '"initial"');
        this.expectOperator(")");
        return { kind: "initial", operand, start, end: this.lastEnd };
      }
    }
    const group = MEMBER_SIGNALS[identifier.text];
    if (group !== undefined) return this.parseMemberSignal(identifier, group);
    if (this.atOperator("(")) throw unknownName("function", identifier.text, start, KNOWN_FUNCTIONS);
    throw unknownName("signal", identifier.text, start, KNOWN_SIGNALS);
  }

  private parseMemberSignal(group: Token, fields: Record<string, MemberSignalKind>): Expr {
    const known = Object.keys(fields).map((field) => `${group.text}.${field}`);
    this.expectOperator(".", `after "${group.text}"`, { knownNames: known, note: `signals: ${known.join(", ")}` });
    const field = this.lexer.next();
    const kind = field.kind === "identifier" && Object.hasOwn(fields, field.text) ? fields[field.text] : undefined;
    if (kind === undefined) {
      if (field.kind !== "identifier") throw this.error(field, `expected one of ${known.join(", ")}`, { knownNames: known });
      throw unknownName("signal", `${group.text}.${field.text}`, group.start, known);
    }
    return { kind, start: group.start, end: field.end };
  }

  /** `(name)` or `(name, name)` after a function identifier; returns the names. */
  private parseNameArguments(fn: Token, count: 1 | 2): string[] {
    this.expectOperator("(", `after "${fn.text}"`);
    const names: string[] = [];
    for (let i = 0; i < count; i++) {
      if (i > 0) this.expectOperator(",", `between the arguments of "${fn.text}"`);
      const name = this.lexer.nextName();
      if (name === undefined) {
        const what = fn.text === "joint" ? "a joint name" : fn.text === "event" ? "an event name" : "an object name";
        throw this.error(this.lexer.peek(), `expected ${what}`);
      }
      names.push(name.text);
    }
    this.expectOperator(")");
    return names;
  }

  private expectOperator(op: string, context = "", details: ErrorDetails = {}): void {
    const token = this.lexer.next();
    if (token.kind !== "operator" || token.text !== op) {
      throw this.error(token, context === "" ? `expected "${op}"` : `expected "${op}" ${context}`, details);
    }
    this.lastEnd = token.end;
  }

  private boolean(expr: Expr, role: string): BooleanExpr {
    if (!isNumeric(expr)) return expr;
    const text = this.quote(expr);
    throw new PredicateSyntaxError(
      expr.start,
      `expected a condition (a comparison or a true/false signal) for ${role} at ${expr.start}, found the number "${text}"`,
    );
  }

  private numeric(expr: Expr, role: string): NumericExpr {
    if (isNumeric(expr)) return expr;
    const text = this.quote(expr);
    throw new PredicateSyntaxError(expr.start, `expected a number for ${role} at ${expr.start}, found the condition "${text}"`);
  }

  private quote(expr: Expr): string {
    return this.source.slice(expr.start, expr.end);
  }

  private atKeyword(word: string): boolean {
    const token = this.lexer.peek();
    return token.kind === "identifier" && token.text === word;
  }

  private atOperator(...ops: string[]): boolean {
    const token = this.lexer.peek();
    return token.kind === "operator" && ops.includes(token.text);
  }

  /** `<expected> at <pos>, found <token>[; <note>]`, the shape of every "wrong token" message. */
  private error(token: Token, expected: string, details: ErrorDetails = {}): PredicateSyntaxError {
    const note = details.note === undefined ? "" : `; ${details.note}`;
    return new PredicateSyntaxError(token.start, `${expected} at ${token.start}, found ${describeToken(token)}${note}`, {
      knownNames: details.knownNames,
    });
  }
}

interface ErrorDetails {
  knownNames?: string[];
  note?: string;
}

function unknownName(what: "function" | "signal", name: string, position: number, known: readonly string[]): PredicateSyntaxError {
  const message = `unknown ${what} "${name}" at ${position}; known ${what}s: ${known.join(", ")}`;
  return new PredicateSyntaxError(position, message, { knownNames: [...known] });
}
