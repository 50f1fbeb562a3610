/**
 * The JSON messages of the WebRTC signalling socket, declared once; webrtc-signalling.ts documents
 * the exchange. Wire names are snake_case where they are more than one word.
 */
import { z } from "zod";

/** An ICE candidate as browsers give it (`RTCIceCandidate.toJSON()`); extra fields are ignored. */
const IceCandidateInit = z.object({
  candidate: z.string(),
  sdpMid: z.string().nullish(),
  sdpMLineIndex: z.number().int().nonnegative().nullish(),
  usernameFragment: z.string().nullish(),
});

/** Browser to coordinator. */
export const ClientMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("answer"), sdp: z.string().min(1) }),
  /** `candidate: null` marks the end of the browser's candidates. */
  z.object({ type: z.literal("candidate"), candidate: IceCandidateInit.nullable() }),
]);
export type ClientMessage = z.infer<typeof ClientMessage>;

export const OfferedCamera = z.object({
  /** The camera's name on the cell; the m-line's stream id (msid) is this name, percent-encoded. */
  name: z.string(),
  /** The m-line (transceiver `mid`) carrying the camera. */
  mid: z.string(),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
});
export type OfferedCamera = z.infer<typeof OfferedCamera>;

/** Coordinator to browser. */
export const ServerMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("offer"), sdp: z.string(), cameras: z.array(OfferedCamera) }),
  z.object({ type: z.literal("candidate"), candidate: IceCandidateInit }),
  z.object({ type: z.literal("error"), message: z.string() }),
]);
export type ServerMessage = z.infer<typeof ServerMessage>;

/** Parses one text frame of the socket; throws an error saying what was wrong. */
export function parseClientMessage(text: string): ClientMessage {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`messages must be JSON objects; got ${JSON.stringify(text.slice(0, 80))}`);
  }
  const parsed = ClientMessage.safeParse(json);
  if (parsed.success) return parsed.data;
  const type = (json as { type?: unknown } | null)?.type;
  if (type !== "answer" && type !== "candidate") {
    throw new Error(`message type must be "answer" or "candidate"; got ${JSON.stringify(type) ?? "none"}`);
  }
  const issue = parsed.error.issues[0]!;
  throw new Error(`invalid "${type}" message: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
}
