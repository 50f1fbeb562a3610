/**
 * The address of the client behind a request, for per-client limits (anonymous rate limits,
 * connections per address). It is the socket's peer, unless that peer is a configured trusted
 * proxy (option `trustedProxies`, ASSAY_TRUSTED_PROXIES; default none): then `X-Forwarded-For` is
 * read from the right, skipping trusted proxies, and the first address that is not one is the
 * client. A header from anyone else is ignored, so a client cannot pick its own bucket.
 */
import { BlockList, isIP } from "node:net";

/** Addresses and CIDR ranges whose `X-Forwarded-For` is believed. */
export interface TrustedProxies {
  /** The entries as configured (for messages and docs). */
  readonly entries: readonly string[];
  has(address: string): boolean;
}

export const NO_TRUSTED_PROXIES: TrustedProxies = { entries: [], has: () => false };

/** `::ffff:10.0.0.1` (an IPv4 peer on a dual-stack socket) is 10.0.0.1. */
export function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address.toLowerCase();
}

/** Compiles `["10.0.0.0/8", "192.168.1.5", "::1", "fd00::/8"]`; throws naming a bad entry. */
export function compileTrustedProxies(entries: readonly string[]): TrustedProxies {
  if (entries.length === 0) return NO_TRUSTED_PROXIES;
  const list = new BlockList();
  for (const raw of entries) {
    const entry = raw.trim();
    const [address, prefix, extra] = entry.split("/");
    const family = isIP(address ?? "");
    const bits = family === 4 ? 32 : 128;
    if (family === 0 || extra !== undefined || (prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= bits))) {
      throw new Error(`trusted proxy ${JSON.stringify(raw)} is not an IP address or CIDR range (e.g. 10.0.0.0/8, 192.168.1.5, ::1, fd00::/8)`);
    }
    const type = family === 4 ? "ipv4" : "ipv6";
    if (prefix === undefined) list.addAddress(normalizeAddress(address!), type);
    else list.addSubnet(normalizeAddress(address!), Number(prefix), type);
  }
  return {
    entries: entries.map((e) => e.trim()),
    has(address) {
      const normal = normalizeAddress(address);
      const family = isIP(normal);
      return family !== 0 && list.check(normal, family === 4 ? "ipv4" : "ipv6");
    },
  };
}

/** An address from X-Forwarded-For, less a port some proxies append (`1.2.3.4:5678`, `[::1]:80`). */
function forwardedAddress(raw: string): string | undefined {
  const text = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  const candidate = bracketed ? bracketed[1]! : /^\d+\.\d+\.\d+\.\d+:\d+$/.test(text) ? text.slice(0, text.lastIndexOf(":")) : text;
  return isIP(candidate) ? normalizeAddress(candidate) : undefined;
}

/**
 * The client's address: `peer` (the socket's remote address) unless it is a trusted proxy, then
 * the rightmost `X-Forwarded-For` entry that is not one (or the last trusted hop when the header
 * runs out or holds something that is not an address).
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, trusted: TrustedProxies): string {
  let current = normalizeAddress(peer ?? "unknown");
  if (!trusted.has(current) || forwardedFor === undefined) return current;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor).split(",");
  while (trusted.has(current) && hops.length > 0) {
    const next = forwardedAddress(hops.pop()!);
    if (next === undefined) break;
    current = next;
  }
  return current;
}
