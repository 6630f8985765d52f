// Many small file operations at once rather than one after another: each one waits for a round
// trip through libuv's thread pool, and a large repository's 20,000 files, one by one, take tens
// of seconds (bench/largeWorkspace.ts). Batches keep the number in flight (and the open files) bounded.

/** How many file operations of one kind are in flight at once (the bench compares it with 1). */
export const fileBatches = { size: 32 };

/** Runs `work` on every item, a batch at a time; the first failure ends it once its batch has settled. */
export async function inBatches<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  const { size } = fileBatches;
  for (let start = 0; start < items.length; start += size) {
    await Promise.all(items.slice(start, start + size).map(work));
  }
}
