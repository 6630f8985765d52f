// Settings from the environment: the repository roots and the sweep interval.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

test('DURABLE_DEBUGGER_REPO_ROOTS: unset means unrestricted; else absolute folders separated by ":"', () => {
  assert.equal(loadConfig({}).repoRoots, null);
  assert.equal(loadConfig({ DURABLE_DEBUGGER_REPO_ROOTS: '' }).repoRoots, null);
  assert.deepEqual(loadConfig({ DURABLE_DEBUGGER_REPO_ROOTS: '/srv/repos:/home/me/code/' }).repoRoots, ['/srv/repos', '/home/me/code']);
  assert.throws(() => loadConfig({ DURABLE_DEBUGGER_REPO_ROOTS: 'repos:/srv' }), (error: unknown) => error instanceof ConfigError && /must list absolute folders/.test(error.message));
});

test('DURABLE_DEBUGGER_REAP_EVERY_SECONDS: every 300 s unless set; must be positive', () => {
  assert.equal(loadConfig({}).reapEverySeconds, 300);
  assert.equal(loadConfig({ DURABLE_DEBUGGER_REAP_EVERY_SECONDS: '5' }).reapEverySeconds, 5);
  assert.throws(() => loadConfig({ DURABLE_DEBUGGER_REAP_EVERY_SECONDS: '0' }), ConfigError);
});
