/**
 * The simulated fleet's control channel, served by the `npm start` process on 127.0.0.1 (port 0)
 * and advertised in `<ASSAY_DATA_DIR>/fleet.json`, which `npm run fleet` reads:
 *
 *   { "pid": <npm start's pid>, "controlPort": <port>, "controlUrl": "http://127.0.0.1:<port>",
 *     "cells": { "<cell>": { "pid": <agent pid or null>, "controlUrl": <sim-cell control URL or null>,
 *                            "link": "plugged" | "unplugged" } } }
 *
 * Routes: GET /cells (status of every cell); POST /cells/<cell>/<command> with command one of
 * estop, reset, kill, restart, unplug, plug; POST /cells/<cell>/instrument/<kind>/<off|on> (a simulated
 * instrument fault: mocap, gripper_state or ft_wrist). Answers {ok, message, cell} or {error, cells}.
 * fleet.json is rewritten whenever a cell starts or exits and removed on close().
 */
import { rmSync, writeFileSync, renameSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CellStateError, UnknownCellError, type SimCellStatus, type SimFleet } from "./launcher.js";

export const FLEET_COMMANDS = ["estop", "reset", "kill", "restart", "unplug", "plug"] as const;
export type FleetCommand = (typeof FLEET_COMMANDS)[number];

/** The contents of fleet.json. */
export interface FleetFile {
  pid: number;
  controlPort: number;
  controlUrl: string;
  cells: Record<string, { pid: number | null; controlUrl: string | null; link: string }>;
}

export interface FleetControl {
  readonly port: number;
  readonly url: string;
  /** Rewrites fleet.json from the fleet's current status (call after a cell starts or exits). */
  refresh(): void;
  close(): Promise<void>;
}

/** What each command says once it is done, in plain words. */
const DONE: Record<FleetCommand, (cell: string) => string> = {
  estop: (cell) => `${cell}: e-stop pressed; the cell takes no work until "reset"`,
  reset: (cell) => `${cell}: e-stop released and reset; the cell takes work again`,
  kill: (cell) => `${cell}: agent process killed (SIGKILL); it stays down until "restart"`,
  restart: (cell) => `${cell}: agent process started again with the same data dir`,
  unplug: (cell) => `${cell}: link to the coordinator cut; it stays cut until "plug"`,
  plug: (cell) => `${cell}: link to the coordinator restored; the agent reconnects on its own`,
};

async function run(fleet: SimFleet, command: FleetCommand, cell: string): Promise<void> {
  switch (command) {
    case "estop": return fleet.estop(cell);
    case "reset": return fleet.reset(cell);
    case "kill": return fleet.kill(cell);
    case "restart": return fleet.restart(cell);
    case "unplug": return fleet.unplug(cell);
    case "plug": return fleet.plug(cell);
  }
}

/** Starts the control server and writes `fleetFilePath`. */
export async function startFleetControl(fleet: SimFleet, fleetFilePath: string): Promise<FleetControl> {
  const reply = (response: ServerResponse, status: number, body: object): void => {
    response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };
  const cellsBody = (): { cells: SimCellStatus[] } => ({ cells: fleet.status() });

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method === "GET" && (path === "/cells" || path === "/")) return reply(response, 200, cellsBody());
    const fault = /^\/cells\/([^/]+)\/instrument\/([^/]+)\/(on|off)$/.exec(path);
    if (request.method === "POST" && fault) {
      const [cell, kind] = [decodeURIComponent(fault[1]), decodeURIComponent(fault[2])];
      try {
        await fleet.instrument(cell, kind, fault[3] === "on");
      } catch (error) {
        if (error instanceof UnknownCellError) return reply(response, 404, { error: error.message, ...cellsBody() });
        if (error instanceof CellStateError) return reply(response, 409, { error: error.message });
        return reply(response, 500, { error: `instrument ${kind} ${fault[3]} on ${cell} failed: ${(error as Error).message}` });
      }
      const message = fault[3] === "off"
        ? `${cell}: instrument ${kind} switched off; its reads fail until "instrument ${cell} ${kind} on"`
        : `${cell}: instrument ${kind} switched on; the agent sees it answer at its next probe`;
      return reply(response, 200, { ok: true, message, cell: fleet.status().find((c) => c.cell === cell) });
    }
    const match = /^\/cells\/([^/]+)\/([^/]+)$/.exec(path);
    if (request.method !== "POST" || !match) {
      return reply(response, 404, { error: `no route ${request.method} ${path}; try GET /cells or POST /cells/<cell>/<${FLEET_COMMANDS.join("|")}>` });
    }
    const cell = decodeURIComponent(match[1]);
    const command = match[2] as FleetCommand;
    if (!FLEET_COMMANDS.includes(command)) {
      return reply(response, 400, { error: `unknown command "${command}"; commands: ${FLEET_COMMANDS.join(", ")}` });
    }
    try {
      await run(fleet, command, cell);
    } catch (error) {
      if (error instanceof UnknownCellError) return reply(response, 404, { error: error.message, ...cellsBody() });
      if (error instanceof CellStateError) return reply(response, 409, { error: error.message });
      return reply(response, 500, { error: `${command} ${cell} failed: ${(error as Error).message}` });
    }
    refresh();
    reply(response, 200, { ok: true, message: DONE[command](cell), cell: fleet.status().find((c) => c.cell === cell) });
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: Error) => reply(response, 500, { error: error.message }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  let closed = false;

  function refresh(): void {
    if (closed) return;
    const file: FleetFile = {
      pid: process.pid,
      controlPort: port,
      controlUrl: url,
      cells: Object.fromEntries(fleet.status().map((c) => [c.cell, { pid: c.pid, controlUrl: c.controlUrl, link: c.link }])),
    };
    // Written aside and renamed, so a reader never sees half a file.
    const partPath = `${fleetFilePath}.part`;
    writeFileSync(partPath, `${JSON.stringify(file, null, 2)}\n`);
    renameSync(partPath, fleetFilePath);
  }
  refresh();

  return {
    port,
    url,
    refresh,
    close() {
      closed = true;
      rmSync(fleetFilePath, { force: true });
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
