/**
 * The repositories that took over SQL from routes, kinds and workers (issue 29 item 1), on both
 * engines: the outbox's single-endpoint event (a threshold run's on_verified), one claim per
 * delivery attempt, coordinator leases, a service secret that stays the same and budgets replaced
 * in place, and the cluster's cell views refreshed many at a time.
 */
import assert from "node:assert/strict";
import { enrollCell, revokeCell } from "../../coordinator/fleet/enrollment.js";
import { ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { listCellsById } from "../../coordinator/store/cells-repo.js";
import { getCellLink, recordCellLink, refreshCellLinks } from "../../coordinator/store/cell-links-repo.js";
import { findBudget, upsertBudget } from "../../coordinator/store/budgets-repo.js";
import { findCoordinator, insertCoordinator, listLiveCoordinatorIds, setCoordinatorAliveUntil } from "../../coordinator/store/coordinators-repo.js";
import { ensureServiceSecret } from "../../coordinator/store/service-secrets-repo.js";
import { findLiveEndpointIdByUrl, leaseDelivery, listDueDeliveries } from "../../coordinator/store/webhooks-repo.js";
import { insertEndpoint } from "../../coordinator/webhooks/endpoints-repo.js";
import { enqueueEvent, enqueueEventForEndpoint } from "../../coordinator/webhooks/outbox.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

const T0 = new Date("2026-03-01T00:00:00.000Z");

for (const engine of STORE_ENGINES) {
  describe(`store repositories (${engine})`, () => {
    it("queues an event for one named endpoint only, and a due delivery is claimed once", async () => {
      const db = await openTestDatabase(engine);
      await ensureAccount(db, "acct_a", "A", T0.toISOString());
      const named = await insertEndpoint(db, "acct_a", { url: "https://hooks.example/verified", events: ["run.completed"], description: null }, T0);
      await insertEndpoint(db, "acct_a", { url: "https://hooks.example/all", events: ["threshold.crossed"], description: null }, T0);
      assert.equal(await findLiveEndpointIdByUrl(db, "acct_a", "https://hooks.example/verified"), named.id);
      assert.equal(await findLiveEndpointIdByUrl(db, "acct_a", "https://hooks.example/none"), undefined);

      const eventId = await enqueueEventForEndpoint(db, "acct_a", named.id, "threshold.crossed", { run_id: "run_1" }, T0);
      let due = await listDueDeliveries(db, T0.toISOString(), 10);
      assert.deepEqual(due.map((d) => [d.ev_id, d.endpoint_id]), [[eventId, named.id]], "the subscribed endpoint does not get the on_verified delivery");

      const other = await enqueueEvent(db, "acct_a", "threshold.crossed", { run_id: "run_2" }, T0);
      due = await listDueDeliveries(db, T0.toISOString(), 10);
      assert.equal(due.filter((d) => d.ev_id === other).length, 1, "an ordinary event reaches the endpoint subscribed to its type");

      const row = due[0];
      const until = new Date(T0.getTime() + 60_000).toISOString();
      assert.equal(await leaseDelivery(db, row.event_id, row.endpoint_id, row.next_attempt_at, until), true);
      assert.equal(await leaseDelivery(db, row.event_id, row.endpoint_id, row.next_attempt_at, until), false, "a second claim of the same attempt fails");
    });

    it("reads the enrolled cells among a list of ids in one call, revoked ones included", async () => {
      const db = await openTestDatabase(engine);
      await enrollCell(db, { cellId: "so101-a", model: "so101" });
      await enrollCell(db, { cellId: "so101-b", model: "so101" });
      await revokeCell(db, "so101-b");
      const rows = await listCellsById(db, ["so101-b", "so101-zz", "so101-a"]);
      assert.deepEqual(rows.map((r) => [r.id, r.revoked !== null]).sort(), [["so101-a", false], ["so101-b", true]]);
      assert.deepEqual(await listCellsById(db, []), []);
    });

    it("refreshes the views of many cell links at once, each only where its session still holds the link", async () => {
      const db = await openTestDatabase(engine);
      // Several statements' worth (50 each), the last one padded.
      const ids = Array.from({ length: 205 }, (_, i) => `so101-${String(i).padStart(3, "0")}`);
      for (const cellId of ids) {
        await recordCellLink(db, { cellId, coordinatorId: "crd_a", sessionId: `s_${cellId}`, connectedAt: T0.toISOString(), view: { state: "idle" }, at: T0.toISOString() });
      }
      // The last cell's stream moved to another session meanwhile: its view is not this session's to write.
      await recordCellLink(db, { cellId: ids.at(-1)!, coordinatorId: "crd_b", sessionId: "s_other", connectedAt: T0.toISOString(), view: { state: "idle" }, at: T0.toISOString() });
      const at = "2026-03-01T00:00:02.000Z";
      const refreshed = await refreshCellLinks(db, ids.map((cellId) => ({ cellId, sessionId: `s_${cellId}`, view: { state: "busy", cell: cellId } })), at);
      assert.equal(refreshed.size, 204);
      assert.equal(refreshed.has(ids.at(-1)!), false);
      const first = await getCellLink(db, ids[0]!);
      assert.deepEqual([JSON.parse(first!.view), first!.updated], [{ state: "busy", cell: ids[0] }, at]);
      assert.deepEqual(JSON.parse((await getCellLink(db, ids[203]!))!.view), { state: "busy", cell: ids[203] });
      assert.deepEqual(JSON.parse((await getCellLink(db, ids.at(-1)!))!.view), { state: "idle" }, "the other session's view is left alone");
      assert.equal((await refreshCellLinks(db, [], at)).size, 0);
    });

    it("keeps coordinator leases, a service secret and a budget", async () => {
      const db = await openTestDatabase(engine);
      await insertCoordinator(db, { id: "crd_a", started: T0.toISOString(), aliveUntil: "2026-03-01T00:00:10.000Z", baseUrl: "http://a", grpcAddress: "127.0.0.1:1" });
      await insertCoordinator(db, { id: "crd_b", started: T0.toISOString(), aliveUntil: "2026-03-01T00:00:10.000Z", baseUrl: "http://b", grpcAddress: "127.0.0.1:2" });
      await setCoordinatorAliveUntil(db, "crd_b", T0.toISOString());
      assert.deepEqual(await listLiveCoordinatorIds(db, "2026-03-01T00:00:05.000Z"), ["crd_a"]);
      assert.equal((await findCoordinator(db, "crd_a"))?.base_url, "http://a");

      const secret = await ensureServiceSecret(db, "test_hmac", T0);
      assert.equal(secret.length, 32);
      assert.deepEqual(await ensureServiceSecret(db, "test_hmac", new Date()), secret, "the secret is made once and then read back");

      await ensureAccount(db, "acct_b", "B", T0.toISOString());
      await upsertBudget(db, "acct_b", { monthly_usd: 10, hard: 0, updated: T0.toISOString() });
      await upsertBudget(db, "acct_b", { monthly_usd: 25.5, hard: 1, updated: "2026-03-02T00:00:00.000Z" });
      assert.deepEqual({ ...await findBudget(db, "acct_b") }, { monthly_usd: 25.5, hard: 1, updated: "2026-03-02T00:00:00.000Z" });
    });
  });
}
