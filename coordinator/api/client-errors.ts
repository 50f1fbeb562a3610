/**
 * Requests Node's HTTP parser refuses before express sees them (headers over the 16 KB limit, a
 * malformed request line) still get the spec's error envelope: Node would answer a bare 431 or
 * 400. Header overflow keeps its 431 status (the status names the problem; the code is the spec's
 * contract_validation_failed); anything else unparseable is 400 with the same code.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";

export function answerClientErrors(server: Server, docsUrl: string): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    // A client that went away gets nothing (as Node's own handler does).
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const overflow = error.code === "HPE_HEADER_OVERFLOW";
    const body = JSON.stringify({
      error: {
        code: "contract_validation_failed",
        message: overflow
          ? "request headers are larger than the 16 KB this server accepts; send fewer or shorter headers"
          : "the request is not valid HTTP/1.1; check the request line and headers",
        doc_url: `${docsUrl}/errors#contract_validation_failed`,
      },
    });
    const status = overflow ? "431 Request Header Fields Too Large" : "400 Bad Request";
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}
