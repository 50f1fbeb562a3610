/** Live stream descriptors (docs/api.md, "Live streams"). */
import { z } from "zod";
import { component, Timestamp } from "./common.js";

export const STREAM_STATES = ["idle", "running", "estopped", "held", "offline"] as const;

export const StreamDescriptor = component("StreamDescriptor", z.strictObject({
  object: z.literal("stream"),
  cell: z.string(),
  robot: z.string().describe("robot pin model@firmware: as the cell reports it when connected, else as installed"),
  environment: z.string(),
  state: z.enum(STREAM_STATES),
  run_id: z.string().nullable().describe("the run the cell is on, when the caller may see it"),
  episode: z.strictObject({ id: z.string(), index: z.number().int().min(0) }).nullable(),
  cameras: z.array(z.strictObject({
    name: z.string(),
    width: z.number().int().min(0).describe("0 until the camera's size is known"),
    height: z.number().int().min(0),
    rate_hz: z.number().min(0).describe("the camera's capture rate; viewers get at most max_frame_rate_hz"),
    mjpeg_url: z.url().describe("multipart/x-mixed-replace JPEG stream; the token in it authenticates (an <img> can use it)"),
  })),
  max_frame_rate_hz: z.number().positive(),
  webrtc: z.strictObject({
    url: z.string().describe("ws:// or wss:// signalling URL under streams_url, with a short-lived token"),
    ice_servers: z.array(z.strictObject({ urls: z.array(z.string()), username: z.string().optional(), credential: z.string().optional() })),
    expires_at: Timestamp,
  }),
  viewers: z.number().int().min(0),
  expires_at: Timestamp.describe("when the URLs' token stops admitting new connections (an open stream goes on)"),
}).describe("A live view of one cell: its cameras as MJPEG and WebRTC, and its state."));
