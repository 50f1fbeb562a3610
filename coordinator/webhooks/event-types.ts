/**
 * The webhook event types of spec section 6, and *added* leaderboard.entered and cell.attention_needed
 * (raised for the operator account only: coordinator/fleet/attention-pager.ts); the only values an
 * endpoint may subscribe to.
 */
export const WEBHOOK_EVENT_TYPES = [
  "run.completed", "episode.failed", "threshold.crossed", "regression.detected", "estop.triggered", "leaderboard.entered", "cell.attention_needed",
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return typeof value === "string" && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}
