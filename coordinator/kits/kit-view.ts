/** Store row -> the wire Kit. */
import type { KitRecord } from "../store/kits-repo.js";

/** `shipping_label_url` of a kit: the authenticated endpoint that hands out a fresh signed PDF link. */
export function shippingLabelEndpoint(baseUrl: string, kitId: string): string {
  return `${baseUrl}/v1/kits/${encodeURIComponent(kitId)}/shipping-label`;
}

export function kitView(row: KitRecord, baseUrl: string): Record<string, unknown> {
  return {
    id: row.id,
    object: "kit",
    name: row.name,
    status: row.status,
    status_history: row.status_history,
    items: row.items,
    tracking: row.tracking,
    environment_ref: row.status === "available" ? `kit/${row.name}` : null,
    shipping_label_url: shippingLabelEndpoint(baseUrl, row.id),
    created: row.created,
  };
}
