/** A reader for the coordinator's server-sent events (GET /v1/runs/{id}/events). */

export interface SseEvent {
  event: string;
  data: unknown;
}

/**
 * Reads a text/event-stream response until it ends or `until` returns true (then cancels it).
 * Comment lines (the server's heartbeats) are skipped.
 */
export async function readSse(response: Response, until: (event: SseEvent, all: SseEvent[]) => boolean = () => false): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return events;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trim());
      }
      if (data.length === 0) continue;
      const parsed = { event, data: JSON.parse(data.join("\n")) };
      events.push(parsed);
      if (until(parsed, events)) {
        await reader.cancel();
        return events;
      }
    }
  }
}
