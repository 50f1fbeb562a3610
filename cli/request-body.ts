/**
 * A JSON request body from a file or, for `-`, from stdin. Checked to be a JSON object before it is
 * sent (sent as written), so a typo is a usage error (exit 2) here rather than a 422 from the API.
 */
import { readFile } from "node:fs/promises";
import { usageError } from "./exit-codes.js";

async function readStdin(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks).toString("utf8");
}

/** The body's text; `source` is a path or `-` for stdin. */
export async function readJsonBody(source: string, stdin: NodeJS.ReadStream = process.stdin, example = 'a run body such as {"kind": "run", "robot": "so101@latest", ...}'): Promise<string> {
  let text: string;
  if (source === "-") {
    if (stdin.isTTY) throw usageError("the body is to come from stdin (-), but stdin is a terminal: pipe the JSON in (assay runs submit - < body.json) or name a file");
    text = await readStdin(stdin);
  } else {
    try {
      text = await readFile(source, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : code === "EACCES" ? "permission denied" : (error as Error).message;
      throw usageError(`cannot read the body ${source}: ${why}`);
    }
  }
  const name = source === "-" ? "the body on stdin" : source;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw usageError(`${name} is not valid JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw usageError(`${name} must be a JSON object (${example}); got ${Array.isArray(parsed) ? "an array" : JSON.stringify(parsed)}`);
  }
  return text;
}
