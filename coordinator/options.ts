/**
 * The coordinator's one options object. `compileCoordinatorOptions` fills defaults, validates and
 * rejects unknown keys; environment variables are read by the process entry, never here.
 */
import { join, resolve } from "node:path";

export interface CoordinatorOptions {
  /** HTTP listen address. Default 127.0.0.1. */
  host: string;
  /** HTTP port for /v1, /artifacts, /docs and /metrics. Default 8080; 0 picks a free port. */
  port: number;
  /** gRPC port for cell agents. Default 50051; 0 picks a free port. */
  grpcPort: number;
  /** Where the SQLite file and the artifact store live. Default ./.assay. */
  dataDir: string;
  /** Admin key to create on first start (must start with asy_live_); otherwise one is generated. */
  apiKey?: string;
  /** Public base URL when behind a proxy; default http://<host>:<port>. */
  publicUrl?: string;
  /** Public streams URL; default ws://<host>:<port>/streams. */
  streamsUrl?: string;
  /** Firmware pin table; default firmware-pins/installations.json. */
  installationsPath?: string;
}

const KNOWN = new Set(["host", "port", "grpcPort", "dataDir", "apiKey", "publicUrl", "streamsUrl", "installationsPath"]);

export function compileCoordinatorOptions(raw: Partial<CoordinatorOptions> = {}): CoordinatorOptions {
  for (const key of Object.keys(raw)) {
    if (!KNOWN.has(key)) throw new Error(`unknown coordinator option "${key}"; known: ${[...KNOWN].join(", ")}`);
  }
  const port = raw.port ?? 8080;
  const grpcPort = raw.grpcPort ?? 50051;
  for (const [name, value] of [["port", port], ["grpcPort", grpcPort]] as const) {
    if (!Number.isInteger(value) || value < 0 || value > 65535) throw new Error(`${name} must be an integer 0..65535; got ${value}`);
  }
  if (raw.apiKey !== undefined && !/^asy_live_[A-Za-z0-9]{16,}$/.test(raw.apiKey)) {
    throw new Error("ASSAY_API_KEY must look like asy_live_ followed by at least 16 letters or digits");
  }
  return {
    host: raw.host ?? "127.0.0.1",
    port,
    grpcPort,
    dataDir: resolve(raw.dataDir ?? ".assay"),
    apiKey: raw.apiKey,
    publicUrl: raw.publicUrl,
    streamsUrl: raw.streamsUrl,
    installationsPath: raw.installationsPath,
  };
}

export function databasePath(options: CoordinatorOptions): string {
  return join(options.dataDir, "assay.sqlite");
}

export function artifactsDir(options: CoordinatorOptions): string {
  return join(options.dataDir, "artifacts");
}
