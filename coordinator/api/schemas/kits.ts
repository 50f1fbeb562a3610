/** Customer object kits (/v1/kits) and their technician operations. */
import { z } from "zod";
import { component, Timestamp } from "./common.js";
import { KIT_ITEMS_MAX, TEXT_MAX_CHARS, tooLong } from "../../json/field-bounds.js";

const q = "must be a positive integer";
const DIMENSIONS = "dimensions_mm must be [x, y, z]: three numbers of millimetres, each > 0 and <= 1000 (the box the simulated world models the kit as)";
const dimension = z.number({ error: DIMENSIONS }).gt(0, { error: DIMENSIONS }).max(1000, { error: DIMENSIONS });
const NAME = `name is required: 1..64 characters of a-z, 0-9 and single hyphens (tasks reference it as "kit/<name>")`;

/** One line of a kit's contents. */
export const KitItem = z.strictObject({
  desc: z.string({ error: "must be a non-empty string" }).trim().min(1, { error: "must be a non-empty string" })
    .max(TEXT_MAX_CHARS, tooLong(TEXT_MAX_CHARS)),
  qty: z.number({ error: q }).int({ error: q }).positive({ error: q }),
}, { error: "must be an object {desc, qty}" });

/** POST /v1/kits body. */
export const CreateKitRequest = component("CreateKitRequest", z.strictObject({
  name: z.string({ error: NAME }).regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, { error: NAME }).max(64, { error: NAME }),
  items: z.array(KitItem, { error: "items is required: a non-empty array of {desc, qty}" }).min(1, { error: "items is required: a non-empty array of {desc, qty}" })
    .max(KIT_ITEMS_MAX, { error: `items must have at most ${KIT_ITEMS_MAX} lines of {desc, qty}` }),
}, { error: "request body must be a JSON object {name, items}" }));

/** Tracking data recorded when a kit is tracked. */
export const KitTracking = component("KitTracking", z.strictObject({
  mocap_markers: z.number({ error: "mocap_markers must be an integer >= 3 (a rigid body needs three markers)" })
    .int({ error: "mocap_markers must be an integer >= 3 (a rigid body needs three markers)" })
    .min(3, { error: "mocap_markers must be an integer >= 3 (a rigid body needs three markers)" }),
  mass_g: z.number({ error: "mass_g must be a positive number of grams" }).positive({ error: "mass_g must be a positive number of grams" }),
  mesh_scan: z.boolean({ error: "mesh_scan must be true or false" }),
  dimensions_mm: z.tuple([dimension, dimension, dimension], { error: DIMENSIONS }).optional(),
}, { error: "request body must be a JSON object {mocap_markers, mass_g, mesh_scan}" }));

/** The spec's Kit (coordinator/kits/kit-view.ts). */
export const Kit = component("Kit", z.strictObject({
  id: z.string(),
  object: z.literal("kit"),
  name: z.string().describe("referenced from tasks as kit/<name> once available"),
  status: z.enum(["registered", "received", "tracked", "available"]),
  status_history: z.array(z.strictObject({ status: z.enum(["registered", "received", "tracked", "available"]), at: Timestamp })),
  items: z.array(z.strictObject({ desc: z.string(), qty: z.number().int() })),
  tracking: z.strictObject({
    mocap_markers: z.number().int(), mass_g: z.number(), mesh_scan: z.boolean(), dimensions_mm: z.tuple([z.number(), z.number(), z.number()]).optional(),
  }).nullable(),
  environment_ref: z.string().nullable().describe("null until available, then kit/<name>"),
  shipping_label_url: z.url().describe("GET it (bearer key) for a fresh signed PDF link"),
  created: Timestamp,
}));

/** The spec's Shipping label: a signed link to the PDF. */
export const ShippingLabel = component("ShippingLabel", z.strictObject({
  url: z.url().describe("signed URL of the PDF; no bearer key needed"),
  expires: Timestamp,
}));
