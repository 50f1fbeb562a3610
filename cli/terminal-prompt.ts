/**
 * Asking a person at a terminal: a line with a default (`Assay API URL [http://127.0.0.1:8080]: `) and a
 * secret read without echo (the terminal in raw mode; nothing typed is written back, not even stars), and
 * a secret piped on stdin for scripts (`echo $KEY | assay login --key-stdin`). Prompts go to stderr so
 * stdout stays for results.
 */
import { createInterface } from "node:readline/promises";
import { usageError } from "./exit-codes.js";

/** A line typed at the terminal; an empty answer takes `fallback`. */
export async function promptLine(question: string, fallback: string, input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stderr): Promise<string> {
  const rl = createInterface({ input, output, terminal: true });
  try {
    const answer = (await rl.question(`${question} [${fallback}]: `)).trim();
    return answer === "" ? fallback : answer;
  } finally {
    rl.close();
  }
}

// eslint-disable-next-line no-control-regex
const ESCAPE_SEQUENCE = /\x1b(\[[0-9;?]*[ -/]*[@-~]|O.|.)?/g;

/**
 * A secret typed at the terminal without echo: Enter ends it, Backspace and Ctrl-U edit it, Ctrl-C
 * stops assay (exit 130) with the terminal restored, Ctrl-D on an empty line is "nothing typed".
 */
export function promptSecret(question: string, input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stderr): Promise<string> {
  return new Promise((resolve, reject) => {
    // Echo off before the prompt shows: a key typed or pasted the moment the prompt appears would
    // otherwise be echoed by the terminal, still in cooked mode (seen with a fast paste under load).
    input.setRawMode(true);
    output.write(question);
    let value = "";
    const finish = (error?: Error) => {
      input.off("data", onData);
      input.setRawMode(false);
      input.pause();
      output.write("\n");
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      // Arrow keys and other escape sequences are not part of a key.
      const text = chunk.toString().replace(ESCAPE_SEQUENCE, "");
      for (const ch of text) {
        if (ch === "\r" || ch === "\n") return finish();
        if (ch === "\u0003") {
          finish();
          process.exit(130);
        }
        if (ch === "\u0004") return value === "" ? finish(usageError("no API key typed")) : finish();
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else if (ch === "\u0015") value = "";
        else if (ch >= " ") value += ch;
      }
    };
    input.on("data", onData);
    input.resume();
  });
}

/** Everything piped on stdin, trimmed (a trailing newline from `echo` is not part of the key). */
export async function readPipedSecret(input: NodeJS.ReadStream = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks).toString("utf8").trim();
}
