/**
 * One delivery attempt over node:http(s): the signed POST to a receiver whose destination passes
 * the policy (destination-policy.ts: the URL's host as written, then every address the socket's
 * lookup resolves). Redirects are not followed (a 3xx is not an acknowledgement), so a receiver
 * cannot bounce a delivery to an internal address. Resolves with the status; rejects on a refused
 * destination, a network error or the timeout.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { refusedUrl, vettedLookup, type DestinationPolicy } from "./destination-policy.js";

export async function postWebhook(url: string, headers: Record<string, string>, body: string, options: { policy: DestinationPolicy; timeoutMs: number; signal: AbortSignal }): Promise<number> {
  const refused = refusedUrl(url, options.policy);
  if (refused) throw new Error(`destination refused: ${refused}; webhooks go to public addresses only`);
  const target = new URL(url);
  const request = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<number>((resolve, reject) => {
    const req = request(target, {
      method: "POST",
      headers: { ...headers, "content-length": Buffer.byteLength(body) },
      lookup: vettedLookup(options.policy) as never,
      timeout: options.timeoutMs,
      signal: options.signal,
    }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}
