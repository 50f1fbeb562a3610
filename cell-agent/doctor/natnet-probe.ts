/**
 * Asks a NatNet server (OptiTrack Motive) whether it is there: a NAT_CONNECT request (message id 0)
 * to its command port, answered by NAT_SERVERINFO (message id 1) whose payload starts with the
 * server's name. Packets are little-endian `[u16 message id][u16 payload bytes][payload]`.
 */
import { createSocket } from "node:dgram";

export const NATNET_COMMAND_PORT = 1510;

export function pingNatNet(serverAddress: string, timeoutMs: number, port = NATNET_COMMAND_PORT): Promise<{ serverName: string; rttMs: number }> {
  const socket = createSocket(serverAddress.includes(":") ? "udp6" : "udp4");
  const started = process.hrtime.bigint();
  return new Promise<{ serverName: string; rttMs: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no NatNet answer from ${serverAddress}:${port} within ${timeoutMs} ms`)), timeoutMs);
    socket.on("message", (packet) => {
      if (packet.length < 4 || packet.readUInt16LE(0) !== 1) return;
      clearTimeout(timer);
      const name = packet.subarray(4, Math.min(packet.length, 4 + 256));
      const end = name.indexOf(0);
      resolve({ serverName: name.subarray(0, end < 0 ? name.length : end).toString("latin1"), rttMs: Number(process.hrtime.bigint() - started) / 1e6 });
    });
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    const request = Buffer.alloc(4);
    request.writeUInt16LE(0, 0);
    request.writeUInt16LE(0, 2);
    socket.send(request, port, serverAddress);
  }).finally(() => socket.close());
}
