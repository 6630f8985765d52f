// How the Temporal server runs: the embedded dev server passes these as flags, the test harness
// and the bench start their servers with them, and the compose deployment loads the same dynamic
// config from deploy/temporal/dynamicconfig.yaml (a test keeps the two in step).
// Measured side by side by bench/serverVariants.ts (issue 14); docs/performance.md, "Latency", has the figures.

/** Dynamic config, setting name → value. */
export const serverDynamicConfig: Record<string, number | boolean> = {
  // The history service hands new workflow and activity tasks to matching by reading its transfer
  // queue, at most this many reads per second (default 20: a task can wait up to 50 ms for the
  // next read). Every task of an agent iteration goes through it.
  'history.transferProcessorMaxPollRPS': 1000,
};

/**
 * SQLite settings of the dev server's database file. Write-ahead logging with synchronous=NORMAL
 * syncs the disk at checkpoints instead of on every commit: a killed server loses nothing, a
 * power cut can lose the last commits (never the file's consistency). Every task of an
 * iteration is several commits, and on a busy disk each sync cost milliseconds.
 */
export const sqlitePragmas: Record<string, string> = {
  journal_mode: 'WAL',
  synchronous: 'NORMAL',
};

/** The settings as `temporal server start-dev` flags; `databaseFile`: false for a server kept in memory. */
export function devServerFlags(options: { databaseFile: boolean }): string[] {
  return [
    ...Object.entries(serverDynamicConfig).flatMap(([key, value]) => [
      '--dynamic-config-value',
      `${key}=${JSON.stringify(value)}`,
    ]),
    ...(options.databaseFile
      ? Object.entries(sqlitePragmas).flatMap(([key, value]) => ['--sqlite-pragma', `${key}=${value}`])
      : []),
  ];
}
