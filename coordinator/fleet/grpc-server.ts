/**
 * The coordinator's CellLink gRPC server: transport only. It binds the port and routes the five
 * CellLink calls to their handlers over a LinkContext the composition root (coordinator/server.ts)
 * built; it owns no state of its own.
 *
 * Transport: insecure credentials, meant for loopback and tests. In a deployment, terminate TLS
 * (mTLS per cell, ideally) in front of this port or pass `credentials`; the bearer cell token
 * authenticates the cell either way and must never cross an untrusted network in clear.
 */
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { CellLinkService, type CellLinkServer } from "../../protocol/gen/cell.js";
import { LinkError } from "../errors/link-errors.js";
import { handleArtifactStatus, handleUploadArtifact } from "./artifact-uploads.js";
import { handleConnect } from "./connect-session.js";
import { handleLiveFeed } from "./live-feed.js";
import { handleFetchModel } from "./model-downloads.js";
import type { LinkContext } from "./link-context.js";

export interface CellLinkServerOptions {
  context: LinkContext;
  /** Listen host; default "127.0.0.1". */
  host?: string;
  /** Listen port; default 0 (any free port, reported back). */
  port?: number;
  /** Server credentials; default insecure (loopback and tests only). */
  credentials?: ServerCredentials;
}

export interface CellLinkServerHandle {
  /** The port actually bound. */
  port: number;
  /** Closes every stream (the cells reconnect later) and shuts the server down. */
  stop(): Promise<void>;
}

export async function startCellLinkServer(options: CellLinkServerOptions): Promise<CellLinkServerHandle> {
  const ctx = options.context;
  const host = options.host ?? "127.0.0.1";
  // grpc-js does not await its handlers: one that fails where it did not answer the call itself is logged here.
  const failed = (what: string) => (error: unknown) => ctx.logger.error(`CellLink ${what} failed: ${(error as Error).stack ?? error}`);
  const implementation: CellLinkServer = {
    connect: (call) => void handleConnect(ctx, call).catch(failed("Connect")),
    artifactStatus: (call, callback) => handleArtifactStatus(ctx, call, callback),
    uploadArtifact: (call, callback) => handleUploadArtifact(ctx, call, callback),
    liveFeed: (call, callback) => void handleLiveFeed(ctx, call, callback).catch(failed("LiveFeed")),
    fetchModel: (call) => void handleFetchModel(ctx, call).catch(failed("FetchModel")),
  };
  const server = new Server();
  server.addService(CellLinkService, implementation);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${options.port ?? 0}`, options.credentials ?? ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)));
  });
  ctx.logger.info(`CellLink listening on ${host}:${port}`);
  return {
    port,
    async stop() {
      // Streams closing now must not requeue their episodes: the cells may finish and report them later.
      ctx.stopping = true;
      for (const session of ctx.registry.sessions()) session.close(new LinkError("shutting_down", "the coordinator is shutting down; reconnect later"));
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      // Messages the cells sent before their streams closed are handled before the store closes.
      await Promise.all([...(ctx.messageQueues ?? [])].map((queue) => queue.idle()));
    },
  };
}
