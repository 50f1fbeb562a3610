/**
 * What `assay` exits with, in one table, and the error type that carries a code up to main.ts.
 *
 *   0  success
 *   1  the run watched ended failed or stopped (runs watch, runs submit --watch)
 *   2  a usage error: unknown command or option, missing argument, unreadable body, no API key
 *   3  the API answered with an error, or could not be reached
 */
export const EXIT = {
  ok: 0,
  runNotCompleted: 1,
  usage: 2,
  api: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * An error `assay` reports in plain words and exits on. `lines` follow the message on stderr (e.g.
 * `see <doc_url>`); `envelope` is the API's error body, printed on stdout under --json.
 */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  readonly lines: readonly string[];
  readonly envelope?: unknown;
  /** The body exactly as the API sent it, when there was one. */
  readonly rawBody?: string;
  /** No answer came (connection refused, reset, timed out): trying again later may work. */
  readonly unreachable: boolean;

  constructor(
    exitCode: ExitCode,
    message: string,
    options: { lines?: readonly string[]; envelope?: unknown; rawBody?: string; unreachable?: boolean; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "CliError";
    this.exitCode = exitCode;
    this.lines = options.lines ?? [];
    this.envelope = options.envelope;
    this.rawBody = options.rawBody;
    this.unreachable = options.unreachable ?? false;
  }
}

/** A command line the user can fix: exit 2. */
export function usageError(message: string, lines: readonly string[] = []): CliError {
  return new CliError(EXIT.usage, message, { lines });
}
