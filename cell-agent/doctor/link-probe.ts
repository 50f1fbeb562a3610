/**
 * The doctor's view of the coordinator link, without disturbing a running agent more than needed:
 * TCP reachability, the token (an ArtifactStatus call, which authenticates but opens no session),
 * and one Hello/Welcome round trip. The doctor's Hello says the cell is e-stopped, so the coordinator
 * gives that short session no work; a running agent reconnects by itself within a second.
 */
import { Metadata, credentials, status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";
import { Socket } from "node:net";
import { CellLinkClient, type CoordinatorMessage, type Hello } from "../../protocol/gen/cell.js";

export function splitAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(":");
  return { host: address.slice(0, at).replace(/^\[|\]$/g, ""), port: Number(address.slice(at + 1)) };
}

/** Resolves once a TCP connection to `address` opens; rejects with the socket error or a timeout. */
export function tcpConnect(address: string, timeoutMs: number): Promise<void> {
  const { host, port } = splitAddress(address);
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    const timer = setTimeout(() => {
      socket.destroy();
      reject(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: "ETIMEDOUT" }));
    }, timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.end();
      resolve();
    });
    socket.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.connect(port, host);
  });
}

function metadataFor(token: string): Metadata {
  const metadata = new Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
}

export type TokenVerdict = { accepted: true } | { accepted: false; code: number; details: string };

/**
 * Asks ArtifactStatus about an artifact that does not exist: an accepted token gets NOT_FOUND, an
 * unknown or revoked one UNAUTHENTICATED. Rejects on transport errors (UNAVAILABLE, deadline).
 */
export function checkToken(address: string, token: string, timeoutMs: number): Promise<TokenVerdict> {
  const client = new CellLinkClient(address, credentials.createInsecure());
  return new Promise<TokenVerdict>((resolve, reject) => {
    const ref = { episodeId: "doctor-probe", kind: "mcap", fileName: "doctor-probe.mcap", bytes: 0, sha256: "" };
    client.artifactStatus(ref, metadataFor(token), { deadline: Date.now() + timeoutMs }, (error: ServiceError | null) => {
      if (!error) return resolve({ accepted: true });
      if (error.code === GrpcStatus.UNAUTHENTICATED) return resolve({ accepted: false, code: error.code, details: error.details });
      if (error.code === GrpcStatus.UNAVAILABLE || error.code === GrpcStatus.DEADLINE_EXCEEDED) return reject(error);
      resolve({ accepted: true });
    });
  }).finally(() => client.close());
}

export interface WelcomeTiming {
  serverTimeMs: number;
  /** Local wall clock when Hello was written and when Welcome arrived, ms since the epoch. */
  sentAtMs: number;
  receivedAtMs: number;
}

/** One Hello/Welcome round trip; rejects with the gRPC error, or on timeout. */
export function helloWelcome(address: string, token: string, hello: Hello, timeoutMs: number, wallClockMs: () => number = Date.now): Promise<WelcomeTiming> {
  const client = new CellLinkClient(address, credentials.createInsecure());
  const call = client.connect(metadataFor(token));
  return new Promise<WelcomeTiming>((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error(`no Welcome within ${timeoutMs} ms`), { code: GrpcStatus.DEADLINE_EXCEEDED })), timeoutMs);
    let sentAtMs = 0;
    call.on("data", (message: CoordinatorMessage) => {
      if (!message.welcome) return;
      clearTimeout(timer);
      resolve({ serverTimeMs: Number(message.welcome.serverTimeMs), sentAtMs, receivedAtMs: wallClockMs() });
    });
    call.on("error", (error: ServiceError) => {
      clearTimeout(timer);
      reject(error);
    });
    call.on("end", () => {
      clearTimeout(timer);
      reject(new Error("the coordinator closed the stream before its Welcome"));
    });
    sentAtMs = wallClockMs();
    call.write({ seq: 0, hello });
  }).finally(() => {
    call.removeAllListeners("data");
    call.on("error", () => undefined);
    call.cancel();
    client.close();
  });
}
