/**
 * The one error the predicate language throws: a predicate that does not lex, parse, type-check,
 * or (for a whole task) an element that is not `{<name>: <expression string>}`.
 */

/** Where in a task spec a predicate sits; set when the error came from `parseTaskPredicates`. */
export type PredicateField = "success_predicates" | "stages";

export interface PredicateSyntaxErrorOptions {
  /** Names the author could have meant: known functions, signals, fields or units. */
  knownNames?: string[];
  field?: PredicateField;
  index?: number;
  name?: string;
}

export class PredicateSyntaxError extends Error {
  override readonly name = "PredicateSyntaxError";
  /** 0-based character offset into the expression string. */
  readonly position: number;
  /** The message without the task location prefix, e.g. `expected ")" at 14, found "for"`. */
  readonly reason: string;
  readonly knownNames?: string[];
  /** Set for errors raised while parsing a task's predicate list. */
  readonly field?: PredicateField;
  /** The element's index in `field`; absent when the field itself is malformed. */
  readonly index?: number;
  /** The predicate's name (the element's key), when the element had one. */
  readonly predicateName?: string;

  constructor(position: number, reason: string, options: PredicateSyntaxErrorOptions = {}) {
    super(options.field === undefined ? reason : `${locate(options)}: ${reason}`);
    this.position = position;
    this.reason = reason;
    if (options.knownNames !== undefined) this.knownNames = options.knownNames;
    if (options.field !== undefined) this.field = options.field;
    if (options.index !== undefined) this.index = options.index;
    if (options.name !== undefined) this.predicateName = options.name;
  }

  /** The same error, located at `field[index]` (named `name`) of a task spec. */
  inTask(field: PredicateField, index?: number, name?: string): PredicateSyntaxError {
    return new PredicateSyntaxError(this.position, this.reason, { knownNames: this.knownNames, field, index, name });
  }
}

function locate(options: PredicateSyntaxErrorOptions): string {
  const where = options.index === undefined ? `${options.field}` : `${options.field}[${options.index}]`;
  return options.name === undefined ? where : `${where} "${options.name}"`;
}
