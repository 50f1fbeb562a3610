/**
 * What the coordinator and the agent say about a peer they call (a policy endpoint, a judge): a socket
 * error in plain words, and an HTTP body read up to a bound, so an endless or huge answer costs at most
 * that many bytes.
 */

const SOCKET_ERRORS: Record<string, string> = {
  ECONNREFUSED: "connection refused", ECONNRESET: "connection reset", ENOTFOUND: "host not found", EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "connection timed out", EHOSTUNREACH: "host unreachable", ENETUNREACH: "network unreachable",
};

/** A failed connection in plain words: the socket error's name when known (fetch puts it on `cause`), else its message. */
export function describeSocketError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = (error as { code?: string }).code ?? cause?.code;
  return (code && SOCKET_ERRORS[code]) ?? cause?.message ?? (error as Error).message;
}

/** The body as UTF-8 text, reading at most `limit` bytes; past it the read is cancelled and `tooLong()` is thrown. */
export async function readBoundedText(response: Response, limit: number, tooLong: () => Error): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLong();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
