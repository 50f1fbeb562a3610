/**
 * A small reader of server-sent events (text/event-stream, WHATWG HTML "Server-sent events"): lines
 * end in CRLF, LF or CR; `event`, `data`, `id` and `retry` fields; a blank line dispatches; comment
 * lines (the coordinator's `: heartbeat`) are skipped but still count as activity.
 */

export interface SseMessage {
  /** `message` when the server named none. */
  event: string;
  /** The data lines joined with "\n". */
  data: string;
  /** The last `id` seen on the stream so far (sent back as Last-Event-ID when reconnecting). */
  lastEventId: string;
  /** A `retry` the server asked for, in milliseconds. */
  retryMs?: number;
}

/**
 * Yields each event of `body` until it ends. `onActivity` is called on every chunk received,
 * heartbeats included, so a caller can tell a quiet stream from a dead one.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, onActivity: () => void = () => {}): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  let lastEventId = "";
  let retryMs: number | undefined;
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      onActivity();
      buffer += decoder.decode(value, { stream: true });
      let match: RegExpExecArray | null;
      // A lone CR at the end of the buffer may be the first half of a CRLF: wait for the next chunk.
      while ((match = /\r\n|\n|\r(?!$)/.exec(buffer)) !== null) {
        const line = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        if (line === "") {
          if (data.length > 0) yield { event: event || "message", data: data.join("\n"), lastEventId, ...(retryMs !== undefined ? { retryMs } : {}) };
          event = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
        else if (field === "id" && !value.includes("\0")) lastEventId = value;
        else if (field === "retry" && /^\d+$/.test(value)) retryMs = Number(value);
      }
    }
  } finally {
    reader.releaseLock();
  }
}
