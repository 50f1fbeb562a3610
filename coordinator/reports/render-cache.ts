/**
 * Rendered documents kept by key (a leaderboard entry's report at one revision of its board), so
 * repeated anonymous requests do not render again: the newest `maxEntries` are kept, concurrent
 * requests for one key share one render, and a render that fails is not kept.
 */
export class RenderCache {
  private readonly entries = new Map<string, Promise<Buffer>>();

  constructor(private readonly maxEntries: number) {}

  /** The document of `key`, rendered with `render` when not kept. */
  get(key: string, render: () => Promise<Buffer>): Promise<Buffer> {
    const kept = this.entries.get(key);
    if (kept) {
      // Most recently used last, so the oldest is evicted first.
      this.entries.delete(key);
      this.entries.set(key, kept);
      return kept;
    }
    const rendering = render();
    this.entries.set(key, rendering);
    rendering.catch(() => {
      if (this.entries.get(key) === rendering) this.entries.delete(key);
    });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return rendering;
  }

  get size(): number {
    return this.entries.size;
  }
}
