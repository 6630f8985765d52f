// Dynamic config the Temporal server runs with: the embedded dev server passes it as flags, the
// test harness and the bench start their servers with it, and the compose deployment loads the
// same values from deploy/temporal-dynamicconfig.yaml (a test keeps the two in step).
// Measured by bench/serverVariants.ts and bench/dispatchFloor.ts (issue 14); see README, "Latency".

/** Setting name → value. */
export const serverDynamicConfig: Record<string, number | boolean> = {
  // The history service hands new workflow and activity tasks to matching by reading its transfer
  // queue, at most this many reads per second (default 20: a task can wait up to 50 ms for the
  // next read). Every task of an agent iteration goes through it.
  'history.transferProcessorMaxPollRPS': 1000,
};

/** The settings as `temporal server start-dev` flags. */
export function dynamicConfigFlags(): string[] {
  return Object.entries(serverDynamicConfig).flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${JSON.stringify(value)}`]);
}
