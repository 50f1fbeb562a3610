/**
 * Where webhooks may go: the public internet only. A receiver URL whose host is, or resolves to, a
 * loopback, private, shared (CGNAT), link-local (cloud metadata at 169.254.169.254 included),
 * unspecified, multicast or reserved address is refused at registration and again at every
 * delivery, on the address the connection actually uses (`vettedLookup` is the socket's DNS
 * lookup, so a name that re-resolves to an internal address between the check and the connect is
 * caught). Numeric spellings (`0x7f000001`, `2130706433`, `127.1`) are normalised by the URL parser
 * before they are checked. Loopback receivers are allowed only when the operator says so
 * (`webhooks.allowLoopback`; tests and the local `npm start` demo set it); private ranges never.
 */
import { promises as dnsPromises, lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";

export interface DestinationPolicy {
  /** Allow 127.0.0.0/8 and ::1 (a local demo or test receiver). */
  allowLoopback: boolean;
}

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

const internal = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["169.254.0.0", 16], ["172.16.0.0", 12], ["192.0.0.0", 24], ["192.0.2.0", 24],
  ["192.168.0.0", 16], ["198.18.0.0", 15], ["198.51.100.0", 24], ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) internal.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [["::", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96], ["2001:db8::", 32], ["100::", 64]] as const) {
  internal.addSubnet(net, bits, "ipv6");
}

/** The IPv4 address inside an IPv4-mapped IPv6 one (::ffff:127.0.0.1), else the address itself. */
function unmapped(address: string): { address: string; family: "ipv4" | "ipv6" } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: "ipv4" };
  return { address, family: isIP(address) === 6 ? "ipv6" : "ipv4" };
}

/** Why `address` may not receive webhooks under `policy`, or undefined when it may. */
export function refusedAddress(address: string, policy: DestinationPolicy): string | undefined {
  const { address: ip, family } = unmapped(address);
  if (loopback.check(ip, family)) return policy.allowLoopback ? undefined : `${address} is a loopback address`;
  if (internal.check(ip, family)) return `${address} is a private, link-local or reserved address`;
  return undefined;
}

/** Why a receiver URL may not be registered, judged on its host as written; undefined when it may. */
export function refusedUrl(url: string, policy: DestinationPolicy): string | undefined {
  // Brackets of an IPv6 literal and a trailing root dot ("localhost.") are not part of the name.
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return policy.allowLoopback ? undefined : `${host} is this machine`;
  if (isIP(host)) return refusedAddress(host, policy);
  if (host.endsWith(".internal") || host.endsWith(".local")) return `${host} is an internal name`;
  return undefined;
}

/**
 * Why a receiver URL may not be registered: its host as written, then (for a name) the addresses it
 * resolves to now. A name that does not resolve yet is accepted; every delivery checks again.
 */
export async function refusedDestination(url: string, policy: DestinationPolicy, timeoutMs = 2000): Promise<string | undefined> {
  const written = refusedUrl(url, policy);
  if (written) return written;
  const host = new URL(url).hostname;
  if (isIP(host.replace(/^\[|\]$/g, ""))) return undefined;
  const addresses = await Promise.race([
    dnsPromises.lookup(host, { all: true }).catch(() => [] as LookupAddress[]),
    new Promise<LookupAddress[]>((resolve) => setTimeout(() => resolve([]), timeoutMs).unref()),
  ]);
  for (const { address } of addresses) {
    const refused = refusedAddress(address, policy);
    if (refused) return `${host} resolves to ${refused}`;
  }
  return undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request: resolves as usual, then refuses the connection when any address
 * of the name is refused by `policy` (a name must not mix public and internal addresses).
 */
export function vettedLookup(policy: DestinationPolicy) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.map((a) => refusedAddress(a.address, policy)).find((reason) => reason !== undefined);
      if (refused) {
        const denied = Object.assign(new Error(`destination refused: ${hostname} resolves to ${refused}; webhooks go to public addresses only`), { code: "EDESTINATIONREFUSED" });
        return callback(denied, []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}
