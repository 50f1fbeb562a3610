/**
 * A test's view of one cell through the operator station's API, as an operator key sees it:
 * `asOperator` (a request with that key), `cell()` (GET /v1/cells/{cell}, asserted 200) and `until`
 * (the cell once a condition holds; the cell's state raises no event a test can await).
 * The service and key are read when called, so a spec can build this before its `before` hook sets them.
 */
import assert from "node:assert/strict";
import type { TestService } from "../integration/helpers.js";
import { eventually } from "./eventually.js";

type Json = Record<string, any>;

export function stationClient(service: () => TestService, operatorKey: () => string, cellId: string) {
  const asOperator = (path: string, init: RequestInit & { json?: unknown } = {}) =>
    service().api(path, { ...init, headers: { authorization: `Bearer ${operatorKey()}` } });
  const cell = async (): Promise<Json> => {
    const response = await asOperator(`/v1/cells/${cellId}`);
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as Json;
  };
  const until = (what: string, test: (c: Json) => boolean): Promise<Json> =>
    eventually(what, async () => {
      const c = await cell();
      return test(c) ? c : undefined;
    }, { intervalMs: 50 });
  return { asOperator, cell, until };
}
