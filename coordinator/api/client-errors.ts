/**
 * Requests Node's HTTP parser refuses before express sees them still get the spec's error envelope
 * (Node would answer a bare 408, 431 or 400), with the security headers of every answer, and the
 * socket is destroyed after the answer. The status names the problem; the code is the spec's
 * contract_validation_failed (docs/errors.md, "How requests that no specific code covers are
 * answered"):
 * - headers or body not received within the connection timeouts (slowloris): 408;
 * - headers over the 16 KB limit: 431;
 * - anything else unparseable: 400.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";
import { answerAndDestroy, rawErrorAnswer } from "../http/raw-answer.js";

export interface ClientErrorTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

export function answerClientErrors(server: Server, docsUrl: string, timeouts: ClientErrorTimeouts): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    // A client that went away gets nothing (as Node's own handler does); nor does one whose answer
    // has already started (a body that stopped arriving after the route replied).
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, message] = describe(error.code, timeouts);
    const envelope = { error: { code: "contract_validation_failed", message, doc_url: `${docsUrl}/errors#contract_validation_failed` } };
    answerAndDestroy(socket, rawErrorAnswer(status, envelope));
  });
}

function describe(code: string | undefined, t: ClientErrorTimeouts): [number, string] {
  switch (code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [408, `the request did not arrive in time: headers must arrive within ${t.headersTimeoutMs} ms and the whole request, body included, within ${t.requestTimeoutMs} ms; send it without pauses, and upload large files in Content-Range chunks`];
    case "HPE_HEADER_OVERFLOW":
      return [431, "request headers are larger than the 16 KB this server accepts; send fewer or shorter headers"];
    default:
      return [400, "the request is not valid HTTP/1.1; check the request line and headers"];
  }
}
