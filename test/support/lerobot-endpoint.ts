/**
 * A JSON-wire endpoint policy (protocol/policy/json-wire.ts) written as a LeRobot user's would be:
 * it reads `joint_positions` in LeRobot's SO-101 units and answers one fixed action in them. It
 * records every request's joint positions. Loopback HTTP on port 0.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface LerobotEndpoint {
  url: string;
  /** `joint_positions` of every request, in order. */
  observed: number[][];
  close(): Promise<void>;
}

export async function startLerobotEndpoint(action: readonly number[]): Promise<LerobotEndpoint> {
  const observed: number[][] = [];
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const step = JSON.parse(body) as { joint_positions?: number[] };
      if (step.joint_positions) observed.push(step.joint_positions);
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ action }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/act`,
    observed,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
