/**
 * The fleet page's order and words for cells waiting on a person (coordinator/console/public/attention-words.js,
 * DOM-free): waiting cells first, longest waiting first, the rest in the list's order; waits in minutes.
 */
import assert from "node:assert/strict";

type Cell = { id: string; attention: { kind: string; since: string; waiting_s: number } | null };
interface AttentionWords {
  NEEDS_WORDS: Record<string, string>;
  waited(seconds: number): string;
  needingFirst(cells: Cell[]): Cell[];
}

describe("fleet page: cells needing a person first", () => {
  let words: AttentionWords;
  before(async () => {
    const path = new URL("../../coordinator/console/public/attention-words.js", import.meta.url).href;
    words = (await import(path)) as AttentionWords;
  });

  it("lists waiting cells first, longest waiting first, and keeps the others' order", () => {
    const cells: Cell[] = [
      { id: "so101-a", attention: null },
      { id: "so101-b", attention: { kind: "reset", since: "2026-11-27T10:02:00.000Z", waiting_s: 60 } },
      { id: "so101-c", attention: null },
      { id: "so101-d", attention: { kind: "label", since: "2026-11-27T10:00:00.000Z", waiting_s: 180 } },
    ];
    assert.deepEqual(words.needingFirst(cells).map((c) => c.id), ["so101-d", "so101-b", "so101-a", "so101-c"]);
  });

  it("says what is needed and for how long", () => {
    assert.equal(words.NEEDS_WORDS.reset, "Set the scene");
    assert.equal(words.NEEDS_WORDS.label, "Judge the finished episode");
    assert.equal(words.waited(45.7), "45 s");
    assert.equal(words.waited(200), "3 min 20 s");
    assert.equal(words.waited(3900), "1 h 5 min");
  });
});
