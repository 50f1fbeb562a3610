/**
 * An HTTP proxy in front of a coordinator that breaks run event streams, as a flaky network or a
 * proxy with an idle timeout would: the first `cuts` responses of GET /v1/runs/{id}/events are cut
 * (the client's socket destroyed) at the first chunk that follows one carrying an `episode` event,
 * and that chunk is not passed on: the client has had an episode for a while (so it was flushed and
 * read, not lost with the socket), and the stream breaks with the next event on its way. Everything
 * else passes through untouched. For testing that a client reconnects and counts each episode once.
 */
import { startFaultyProxy } from "./faulty-proxy.js";

export interface StreamCuttingProxy {
  /** The proxy's base URL, to use instead of the coordinator's. */
  url: string;
  /** Event streams cut so far. */
  cuts(): number;
  /** Requests for event streams seen so far (the first connection and every reconnect). */
  eventStreams(): number;
  close(): Promise<void>;
}

const EVENTS_PATH = /^\/v1\/runs\/[^/]+\/events(\?|$)/;

export async function startStreamCuttingProxy(target: string, options: { cuts: number }): Promise<StreamCuttingProxy> {
  let cutsLeft = options.cuts;
  let cut = 0;
  let eventStreams = 0;
  const proxy = await startFaultyProxy(target, {
    cutRequest: (req) => {
      if (EVENTS_PATH.test(req.url ?? "")) eventStreams++;
      return false;
    },
    takeAnswer: (req, answer, res) => {
      if (!EVENTS_PATH.test(req.url ?? "") || answer.statusCode !== 200 || cutsLeft <= 0) return false;
      cutsLeft--;
      let episodeForwarded = false;
      answer.on("data", (chunk: Buffer) => {
        if (!episodeForwarded) {
          episodeForwarded = chunk.toString().includes("event: episode");
          return void res.write(chunk);
        }
        cut++;
        answer.destroy();
        res.socket?.destroy();
      });
      answer.on("end", () => res.end());
      return true;
    },
  });
  return { ...proxy, cuts: () => cut, eventStreams: () => eventStreams };
}
