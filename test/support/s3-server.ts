/**
 * An S3-compatible server in this process (s3rver) on 127.0.0.1, port 0, storing into a temp
 * folder, with one bucket. s3rver accepts the fixed key pair S3RVER/S3RVER.
 *
 * NOTE: s3rver checks a presigned URL's expiry but not its V4 signature, and implements neither
 * ListParts nor AbortMultipartUpload; tests must not rely on those.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error s3rver ships no type declarations
import S3rver from "s3rver";

export interface S3Server {
  endpoint: string;
  region: string;
  bucket: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  stop(): Promise<void>;
}

export async function startS3Server(bucket = "assay-test"): Promise<S3Server> {
  const directory = await mkdtemp(join(tmpdir(), "assay-s3rver-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const address = (await server.run()) as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    region: "us-east-1",
    bucket,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    async stop() {
      const http = server.httpServer as Server;
      http.closeAllConnections();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
