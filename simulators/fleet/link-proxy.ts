/**
 * A loopback TCP proxy in front of the coordinator's CellLink port, one per simulated cell: the
 * cell's network cable. `unplug()` destroys every proxied connection (both ends, so the agent and
 * the coordinator each see their socket die) and refuses new ones until `plug()`. Bytes are passed
 * through untouched, so from either side this is a real cable pull, not a protocol fake.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";

export type LinkState = "plugged" | "unplugged";

export interface LinkProxy {
  /** host:port the agent dials instead of the coordinator. */
  readonly address: string;
  state(): LinkState;
  /** Connections currently passed through. */
  connections(): number;
  /** Cuts every current connection and refuses new ones until plug(). Idempotent. */
  unplug(): void;
  /** Accepts connections again. Idempotent. */
  plug(): void;
  close(): Promise<void>;
}

/** Splits "host:port" (or "[v6]:port"); a wildcard listen address is dialled on loopback. */
export function splitHostPort(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(":");
  const port = Number(address.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port) || port <= 0) throw new Error(`expected "host:port"; got ${JSON.stringify(address)}`);
  let host = address.slice(0, at).replace(/^\[(.*)\]$/, "$1");
  if (host === "0.0.0.0") host = "127.0.0.1";
  if (host === "::") host = "::1";
  return { host, port };
}

/** Starts a proxy on 127.0.0.1, port 0, forwarding to `upstream` ("host:port"). */
export async function startLinkProxy(upstream: string): Promise<LinkProxy> {
  const target = splitHostPort(upstream);
  let state: LinkState = "plugged";
  const pairs = new Set<{ agent: Socket; coordinator: Socket }>();

  const server: Server = createServer((agent) => {
    if (state === "unplugged") {
      agent.destroy();
      return;
    }
    const coordinator = connect(target.port, target.host);
    const pair = { agent, coordinator };
    pairs.add(pair);
    const cut = () => {
      pairs.delete(pair);
      agent.destroy();
      coordinator.destroy();
    };
    // Either side closing or failing closes the other, as a dead peer would.
    for (const socket of [agent, coordinator]) {
      socket.setNoDelay(true);
      socket.on("error", cut);
      socket.on("close", cut);
    }
    agent.pipe(coordinator);
    coordinator.pipe(agent);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  const cutAll = () => {
    for (const pair of [...pairs]) {
      pairs.delete(pair);
      pair.agent.destroy();
      pair.coordinator.destroy();
    }
  };

  return {
    address: `127.0.0.1:${port}`,
    state: () => state,
    connections: () => pairs.size,
    unplug() {
      state = "unplugged";
      cutAll();
    },
    plug() {
      state = "plugged";
    },
    close() {
      cutAll();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
