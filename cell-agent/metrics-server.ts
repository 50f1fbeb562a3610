/**
 * The agent's local HTTP endpoint, on 127.0.0.1 only (default port 9464):
 *   GET  /metrics       Prometheus text of the agent's registry (scrape it through a local exporter or SSH)
 *   GET  /status        {cell, state, coordinator, scene_pending}: what the agent is doing and which coordinator
 *                       it is connected to (null: none), for the doctor and technicians
 *   GET  /scene-ready   the scene the agent is waiting for (objects, lighting), or 404 when none
 *   POST /scene-ready   a technician confirms the scene is set; 409 when no reset is waiting
 *   POST /estop/reset   clears a latched e-stop once the button is released; 409 with the reason otherwise
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import type { SceneReadyGate } from "./devices/scene/scene-ready-gate.js";

export interface MetricsServerOptions {
  /** Loopback port; 0 picks a free one. */
  port: number;
  registry: Registry;
  cellId: string;
  /** The agent's work state ("idle", "busy", "awaiting_reset", "estopped", "held", "stopped"). */
  state: () => string;
  /** host:port of the coordinator the agent is connected to, or null. */
  coordinator?: () => string | null;
  sceneGate?: SceneReadyGate;
  /** Clears the e-stop; throws a plain-words Error when it may not. */
  resetEstop?: () => void;
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    const reply = (status: number, body: unknown) => response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body) + "\n");
    const route = `${request.method} ${(request.url ?? "/").split("?")[0]}`;
    // Drain any request body; none of the routes reads one.
    request.resume();
    switch (route) {
      case "GET /metrics":
        options.registry.metrics().then(
          (text) => response.writeHead(200, { "content-type": options.registry.contentType }).end(text),
          (error: Error) => reply(500, { error: error.message }),
        );
        return;
      case "GET /status":
        reply(200, { cell: options.cellId, state: options.state(), coordinator: options.coordinator?.() ?? null, scene_pending: options.sceneGate?.pending !== null && options.sceneGate?.pending !== undefined });
        return;
      case "GET /scene-ready": {
        const pending = options.sceneGate?.pending;
        if (!pending) reply(404, { error: "no scene reset is waiting for a technician" });
        else reply(200, pending);
        return;
      }
      case "POST /scene-ready":
        if (options.sceneGate?.confirm()) reply(200, { confirmed: true });
        else reply(409, { error: "no scene reset is waiting for a technician; nothing to confirm" });
        return;
      case "POST /estop/reset":
        try {
          if (!options.resetEstop) throw new Error("this agent cannot reset its e-stop from here");
          options.resetEstop();
          reply(200, { state: options.state() });
        } catch (error) {
          reply(409, { error: (error as Error).message });
        }
        return;
      default:
        reply(404, { error: `no such endpoint: ${route}; try GET /status, GET /metrics, POST /scene-ready, POST /estop/reset` });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
