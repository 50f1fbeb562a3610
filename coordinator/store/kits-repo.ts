/**
 * Kits: rows of `kits`. Status changes go through coordinator/domain/kit-state.ts (see `advanceKit`). Readers return
 * `KitRecord`s, whose JSON columns (status_history, items, tracking) are parsed here once.
 */
import type { Db } from "./database.js";
import { nextKitStatus, type KitOperation, type KitStatus } from "../domain/kit-state.js";
import { lockName } from "./named-lock.js";

export interface KitRow {
  id: string;
  account_id: string;
  name: string;
  status: KitStatus;
  /** JSON array of {status, at}. */
  status_history: string;
  /** JSON array of {desc, qty}. */
  items: string;
  /** JSON {mocap_markers, mass_g, mesh_scan, dimensions_mm?} once tracked. */
  tracking: string | null;
  created: string;
}

export interface KitItem {
  desc: string;
  qty: number;
}

export interface KitTracking {
  mocap_markers: number;
  mass_g: number;
  mesh_scan: boolean;
  /** Optional box size [x, y, z] in millimetres the simulated world models the kit as (see kit-physics.ts). */
  dimensions_mm?: [number, number, number];
}

/** A kit as the coordinator reads it: the row with its JSON columns parsed. */
export interface KitRecord extends Omit<KitRow, "status_history" | "items" | "tracking"> {
  status_history: Array<{ status: KitStatus; at: string }>;
  items: KitItem[];
  tracking: KitTracking | null;
}

/** Parses a `kits` row once, at the store's edge. */
export function kitRecordOf(row: KitRow): KitRecord {
  return {
    ...row,
    status_history: JSON.parse(row.status_history) as KitRecord["status_history"],
    items: JSON.parse(row.items) as KitItem[],
    tracking: row.tracking === null ? null : (JSON.parse(row.tracking) as KitTracking),
  };
}

const one = (row: unknown): KitRecord | undefined => (row ? kitRecordOf(row as KitRow) : undefined);

export async function insertKit(db: Db, kit: { id: string; accountId: string; name: string; items: KitItem[]; created: string }): Promise<void> {
  await db.prepare(
    `INSERT INTO kits (id, account_id, name, status, status_history, items, tracking, created)
     VALUES (?, ?, ?, 'registered', ?, ?, NULL, ?)`,
  ).run(kit.id, kit.accountId, kit.name, JSON.stringify([{ status: "registered", at: kit.created }]), JSON.stringify(kit.items), kit.created);
}

export async function getKit(db: Db, id: string): Promise<KitRecord | undefined> {
  return one(await db.prepare(`SELECT * FROM kits WHERE id = ?`).get(id));
}

export async function findKitByName(db: Db, accountId: string, name: string): Promise<KitRecord | undefined> {
  return one(await db.prepare(`SELECT * FROM kits WHERE account_id = ? AND name = ?`).get(accountId, name));
}

/** The account's kits, newest first. */
export async function listKits(db: Db, accountId: string): Promise<KitRecord[]> {
  return (await db.prepare(`SELECT * FROM kits WHERE account_id = ? ORDER BY created DESC, id DESC`).all(accountId) as KitRow[]).map(kitRecordOf);
}

/**
 * Applies a technician operation in one transaction: checks the move with kit-state.ts (throwing
 * its 422 when illegal), appends to status_history and stores `tracking` when given.
 */
export async function advanceKit(db: Db, id: string, op: KitOperation, at: string, tracking?: KitTracking): Promise<KitRecord | undefined> {
  return await db.transaction(async (db) => {
    await lockName(db, `kit:${id}`);
    const row = await getKit(db, id);
    if (!row) return undefined;
    const status = nextKitStatus(row.status, op, row);
    const history = [...row.status_history, { status, at }];
    await db.prepare(`UPDATE kits SET status = ?, status_history = ?, tracking = COALESCE(?, tracking) WHERE id = ?`).run(
      status, JSON.stringify(history), tracking ? JSON.stringify(tracking) : null, id,
    );
    return getKit(db, id);
  });
}
