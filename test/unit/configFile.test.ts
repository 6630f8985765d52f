// The user's config file (issue 25): defaults for the runs they start (model, budgets, sandbox
// limits) and any environment setting by name; the environment and the command's options win;
// a mistake names the file and the field.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { inputFrom } from '../../src/cli/runOptions.js';

const folder = mkdtempSync(join(tmpdir(), 'durable-debugger-config-'));
after(() => rmSync(folder, { recursive: true, force: true }));

function withFile(content: unknown, environment: NodeJS.ProcessEnv = {}) {
  const path = join(folder, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return loadConfig({ HOME: folder, DURABLE_DEBUGGER_CONFIG: path, ...environment });
}

test('no file: no defaults, and the environment decides as before', () => {
  const config = loadConfig({ HOME: folder, ANTHROPIC_MODEL: 'claude-x' });
  assert.deepEqual(config.runDefaults, { budgets: {}, sandbox: {} });
  assert.equal(config.anthropic.model, 'claude-x');
});

test("the file's model and settings apply unless the environment sets them", () => {
  const file = {
    model: 'claude-opus-4-1',
    settings: { TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_PORT: 7300 },
  };
  const config = withFile(file);
  assert.equal(config.anthropic.model, 'claude-opus-4-1');
  assert.equal(config.temporalAddress, 'temporal.internal:7233');
  assert.equal(config.temporalPort, 7300);
  const overridden = withFile(file, { ANTHROPIC_MODEL: 'claude-haiku', TEMPORAL_ADDRESS: 'other:7233' });
  assert.equal(overridden.anthropic.model, 'claude-haiku');
  assert.equal(overridden.temporalAddress, 'other:7233');
});

test("the file's budgets and sandbox limits are the run's defaults; the command's options win", () => {
  const config = withFile({
    budgets: { maxCostUsd: 5, maxIterations: 40 },
    sandbox: { memoryMb: 2048, commandTimeoutSeconds: 300 },
  });
  assert.deepEqual(config.runDefaults, {
    budgets: { maxCostUsd: 5, maxIterations: 40 },
    sandbox: { memoryMb: 2048, commandTimeoutSeconds: 300 },
  });
  const repo = folder;
  assert.deepEqual(inputFrom(repo, {}, config.runDefaults).budgets, { maxCostUsd: 5, maxIterations: 40 });
  assert.deepEqual(inputFrom(repo, {}, config.runDefaults).sandbox, { memoryMb: 2048, commandTimeoutSeconds: 300 });
  const input = inputFrom(repo, { maxIterations: 7, commandTimeout: 60 }, config.runDefaults);
  assert.deepEqual(input.budgets, { maxCostUsd: 5, maxIterations: 7 });
  assert.deepEqual(input.sandbox, { memoryMb: 2048, commandTimeoutSeconds: 60 });
});

test('a mistake in the file names the file and the field', () => {
  const refused = (content: unknown, pattern: RegExp) =>
    assert.throws(
      () => withFile(content),
      (error: unknown) => error instanceof ConfigError && pattern.test(error.message),
    );
  refused('{ "model": ', /is not valid JSON/);
  refused({ modle: 'x' }, /\.json: .*Unrecognized key.*modle/);
  refused({ budgets: { maxCostUsd: -1 } }, /\.json: budgets\.maxCostUsd: /);
  refused({ budgets: { maxIteration: 3 } }, /\.json: budgets: .*maxIteration/);
  refused({ sandbox: { memoryMb: 1 } }, /\.json: sandbox\.memoryMb: /);
  refused({ settings: { TEMPORAL_ADRESS: 'x:1' } }, /settings\.TEMPORAL_ADRESS is not a setting/);
  refused({ settings: { TEMPORAL_PORT: 'seventy' } }, /settings in .*\.json.*TEMPORAL_PORT/);
});
