// The sandbox's limits: defaults measured on real suites (bench/suiteMemory.ts), raised by the run
// (--memory, --cpus, --pids, --command-timeout, or `sandbox` in the input) and by the repository's
// durable-debugger.json `sandbox`, which may raise them only so far and never lowers them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { effectiveLimits, sandboxLimitsSchema } from '../../src/agent/input.js';
import { inputFrom } from '../../src/cli/runOptions.js';
import { parseRepositoryConfig } from '../../src/sandbox/environment/plan.js';

const noDefaults = { budgets: {}, sandbox: {} };

test('the run’s options set the sandbox’s limits', () => {
  const input = inputFrom('.', { memory: 4096, cpus: 2, pids: 2048, commandTimeout: 600 }, noDefaults);
  assert.deepEqual(input.sandbox, { commandTimeoutSeconds: 600, memoryMb: 4096, cpus: 2, pids: 2048 });
  assert.equal(inputFrom('.', {}, noDefaults).sandbox, undefined);
});

test('durable-debugger.json raises the limits a suite needs, within what a repository may ask for', () => {
  const config = parseRepositoryConfig(JSON.stringify({ sandbox: { memoryMb: 4096, commandTimeoutSeconds: 600 } }));
  assert.deepEqual(config.sandbox, { memoryMb: 4096, commandTimeoutSeconds: 600 });
  const run = sandboxLimitsSchema.parse({ memoryMb: 8192, commandTimeoutSeconds: 60 });
  // Raised where the repository asks for more, never lowered: the run's 8192 MB stays.
  assert.deepEqual(effectiveLimits(run, config.sandbox), { ...run, commandTimeoutSeconds: 600 });
  assert.throws(
    () => parseRepositoryConfig('{"sandbox": {"memoryMb": 65536}}'),
    /sandbox\.memoryMb 65536 is above what a repository may ask for \(8192\); the run's own options \(--memory/,
  );
  assert.throws(
    () => parseRepositoryConfig('{"sandbox": {"fileSizeMb": 10}}'),
    /sandbox\.fileSizeMb is not a limit a repository may raise/,
  );
  assert.throws(
    () => parseRepositoryConfig('{"sandbox": {"pids": 1.5}}'),
    /sandbox\.pids must be a positive whole number/,
  );
  assert.throws(() => parseRepositoryConfig('{"sandbox": 2048}'), /sandbox must be an object/);
});
