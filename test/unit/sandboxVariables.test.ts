import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildCacheFolder } from '../../src/sandbox/environment/plan.js';
import { environmentPaths } from '../../src/sandbox/environment/planTypes.js';
import { environmentImageEnv, sandboxContainerEnv } from '../../src/sandbox/container/sandboxEnv.js';

test('a sandbox gets the documented set; an environment image adds its variables and its PATH replaces ours', () => {
  assert.deepEqual(sandboxContainerEnv(), [
    'PATH=/usr/local/bin:/usr/bin:/bin',
    'HOME=/tmp',
    'LANG=C.UTF-8',
    'CI=true',
  ]);
  assert.deepEqual(sandboxContainerEnv(['PATH=/opt/venv/bin:/usr/bin:/bin', 'VIRTUAL_ENV=/opt/venv']), [
    'HOME=/tmp',
    'LANG=C.UTF-8',
    'CI=true',
    'PATH=/opt/venv/bin:/usr/bin:/bin',
    'VIRTUAL_ENV=/opt/venv',
  ]);
});

test('the documented image variables are the ones the plans set', () => {
  assert.deepEqual(environmentImageEnv('CACHE_DIR'), [`CACHE_DIR=${buildCacheFolder}`]);
  assert.deepEqual(environmentImageEnv('VIRTUAL_ENV'), [`VIRTUAL_ENV=${environmentPaths.venv}`]);
});
