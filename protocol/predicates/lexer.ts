/**
 * Turns a predicate expression into tokens, on demand. Two modes: ordinary tokens (numbers with
 * optional unit suffixes, identifiers, operators), and names (the object, joint or event in
 * `pose(block-blue)`), which may contain `-` and `/` between word characters or be double-quoted.
 * The parser asks for a name only where one belongs, so `a-b` is a name there and a subtraction
 * elsewhere.
 */
import { PredicateSyntaxError } from "./errors.js";

export type Dimension = "length" | "time" | "angle" | "force";

export interface Unit {
  symbol: string;
  /** Multiply by this to get SI (metres, seconds, radians, newtons). */
  toSi: number;
  dimension: Dimension;
}

/** Unit suffixes a number may carry, written directly after it (`3cm`, `1.5s`, `20deg`). */
export const UNITS: Readonly<Record<string, Unit>> = {
  m: { symbol: "m", toSi: 1, dimension: "length" },
  cm: { symbol: "cm", toSi: 0.01, dimension: "length" },
  mm: { symbol: "mm", toSi: 0.001, dimension: "length" },
  s: { symbol: "s", toSi: 1, dimension: "time" },
  ms: { symbol: "ms", toSi: 0.001, dimension: "time" },
  deg: { symbol: "deg", toSi: Math.PI / 180, dimension: "angle" },
  N: { symbol: "N", toSi: 1, dimension: "force" },
};

export type TokenKind = "number" | "identifier" | "operator" | "name" | "end";

export interface Token {
  kind: TokenKind;
  /** Source text; for a quoted name, the name without its quotes. */
  text: string;
  start: number;
  /** Exclusive. */
  end: number;
  /** Numbers only: the value converted to SI. */
  value?: number;
  /** Numbers only: the unit suffix, if any. */
  unit?: Unit;
}

const OPERATORS = ["<=", ">=", "==", "!=", "<", ">", "+", "-", "*", "/", "(", ")", ",", "."];
const NUMBER = /[0-9]+(?:\.[0-9]+)?|\.[0-9]+/y;
const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]*/y;
const UNIT_SUFFIX = /[A-Za-z]+/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*(?:[-/][A-Za-z0-9_]+)*/y;
const BARE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(?:[-/][A-Za-z0-9_]+)*$/;

/** How a name must be written in an expression: bare when it can be, else double-quoted. */
export function formatName(name: string): string {
  return BARE_NAME.test(name) ? name : `"${name}"`;
}

/** How an error message shows a token: `"for"`, or `end of expression`. */
export function describeToken(token: Token): string {
  return token.kind === "end" ? "end of expression" : `"${token.text}"`;
}

export class Lexer {
  private position = 0;
  private peeked?: Token;

  constructor(readonly source: string) {}

  peek(): Token {
    this.peeked ??= this.scan();
    return this.peeked;
  }

  next(): Token {
    const token = this.peek();
    this.peeked = undefined;
    return token;
  }

  /**
   * Reads a name (object, joint or event) at the current position: `cube`, `block-blue`,
   * `kit/mug`, or `"anything but a quote"`. Returns undefined, consuming nothing, when none is there.
   */
  nextName(): Token | undefined {
    if (this.peeked !== undefined) {
      this.position = this.peeked.start;
      this.peeked = undefined;
    }
    this.skipWhitespace();
    const start = this.position;
    if (this.source[start] === '"') {
      const close = this.source.indexOf('"', start + 1);
      if (close < 0) {
        const reason = `expected a closing '"' for the name opened at ${start}, found end of expression`;
        throw new PredicateSyntaxError(this.source.length, reason);
      }
      if (close === start + 1) throw new PredicateSyntaxError(start, `expected a name at ${start}, found '""'`);
      this.position = close + 1;
      return { kind: "name", text: this.source.slice(start + 1, close), start, end: this.position };
    }
    const text = this.match(NAME);
    if (text === undefined) return undefined;
    return { kind: "name", text, start, end: this.position };
  }

  private scan(): Token {
    this.skipWhitespace();
    const start = this.position;
    if (start >= this.source.length) return { kind: "end", text: "", start, end: start };

    const digits = this.match(NUMBER);
    if (digits !== undefined) return this.finishNumber(digits, start);

    const identifier = this.match(IDENTIFIER);
    if (identifier !== undefined) return { kind: "identifier", text: identifier, start, end: this.position };

    for (const op of OPERATORS) {
      if (this.source.startsWith(op, start)) {
        this.position += op.length;
        return { kind: "operator", text: op, start, end: this.position };
      }
    }
    const char = this.source[start];
    if (char === "=" || char === "!") {
      throw new PredicateSyntaxError(start, `expected "${char}=" at ${start}, found "${char}"`);
    }
    throw new PredicateSyntaxError(start, `unexpected character "${char}" at ${start}`);
  }

  private finishNumber(digits: string, start: number): Token {
    const unitStart = this.position;
    const suffix = this.match(UNIT_SUFFIX);
    let unit: Unit | undefined;
    if (suffix !== undefined) {
      unit = Object.hasOwn(UNITS, suffix) ? UNITS[suffix] : undefined;
      if (unit === undefined) {
        const known = Object.keys(UNITS);
        throw new PredicateSyntaxError(unitStart, `unknown unit "${suffix}" at ${unitStart}; known units: ${known.join(", ")}`, {
          knownNames: known,
        });
      }
    }
    const value = Number(digits) * (unit?.toSi ?? 1);
    const token: Token = { kind: "number", text: this.source.slice(start, this.position), start, end: this.position, value };
    if (unit !== undefined) token.unit = unit;
    return token;
  }

  private match(pattern: RegExp): string | undefined {
    pattern.lastIndex = this.position;
    const found = pattern.exec(this.source);
    if (found === null) return undefined;
    this.position += found[0].length;
    return found[0];
  }

  private skipWhitespace(): void {
    while (this.position < this.source.length && /\s/.test(this.source[this.position]!)) this.position++;
  }
}
