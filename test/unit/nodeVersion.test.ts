import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseNodeVersion, currentLtsMajor, npmForNode } from '../../src/sandbox/environment/node/nodeVersion.js';
import { EnvironmentConfigError } from '../../src/sandbox/environment/planTypes.js';

/** A user whose machine runs Node 20, on a day when 26 is the LTS. */
const host = { nodeVersion: '20.19.5', today: new Date('2026-12-02T00:00:00Z') };
const packageJson = (fields: Record<string, unknown>) => JSON.stringify({ name: 'p', ...fields });

test('the LTS follows Node’s schedule: even majors until 26, one major a year from 27, each LTS from late October', () => {
  assert.equal(currentLtsMajor(new Date('2024-06-01T00:00:00Z')), 20);
  assert.equal(currentLtsMajor(new Date('2024-11-15T00:00:00Z')), 22);
  assert.equal(currentLtsMajor(new Date('2025-12-01T00:00:00Z')), 24);
  assert.equal(currentLtsMajor(new Date('2026-12-02T00:00:00Z')), 26);
  assert.equal(currentLtsMajor(new Date('2027-09-30T00:00:00Z')), 26);
  assert.equal(currentLtsMajor(new Date('2027-11-02T00:00:00Z')), 27);
  assert.equal(currentLtsMajor(new Date('2030-11-02T00:00:00Z')), 30);
});

test('version files as nvm, nodenv, fnm and asdf read them', () => {
  const choose = (manifests: Record<string, string>) => chooseNodeVersion(manifests, host);
  assert.deepEqual(choose({ '.nvmrc': '20\n' }), { range: '20', reason: 'from .nvmrc' });
  assert.deepEqual(choose({ '.nvmrc': 'v18.19.1' }), { range: '18.19.1', reason: 'from .nvmrc' });
  assert.deepEqual(choose({ '.nvmrc': '# pinned for the esm loader\nlts/iron\n' }), {
    range: '20',
    reason: 'from .nvmrc',
  });
  assert.deepEqual(choose({ '.nvmrc': 'lts/*' }), { range: '26', reason: 'from .nvmrc' });
  assert.deepEqual(choose({ '.nvmrc': 'node' }), { range: '*', reason: 'from .nvmrc' });
  assert.deepEqual(choose({ '.node-version': '22.11.0\n' }), { range: '22.11.0', reason: 'from .node-version' });
  assert.deepEqual(choose({ '.tool-versions': 'python 3.12.1\nnodejs 18.20.4 16.20.2\n' }), {
    range: '18.20.4',
    reason: 'from .tool-versions',
  });
  assert.deepEqual(choose({ '.tool-versions': 'nodejs lts-hydrogen\n' }), {
    range: '18',
    reason: 'from .tool-versions',
  });
  // .nvmrc first, as nvm users have it, over package.json.
  assert.deepEqual(choose({ '.nvmrc': '20', 'package.json': packageJson({ volta: { node: '22.1.0' } }) }), {
    range: '20',
    reason: 'from .nvmrc',
  });
  assert.throws(() => choose({ '.nvmrc': 'lts/unobtainium' }), EnvironmentConfigError);
  assert.throws(() => choose({ '.nvmrc': 'my-favourite' }), /\.nvmrc says "my-favourite", which is not a Node version/);
});

test('package.json volta, devEngines and engines', () => {
  const choose = (fields: Record<string, unknown>) => chooseNodeVersion({ 'package.json': packageJson(fields) }, host);
  assert.deepEqual(choose({ volta: { node: '22.12.0', npm: '10.9.0' } }), {
    range: '22.12.0',
    reason: 'from package.json volta',
  });
  assert.deepEqual(choose({ devEngines: { runtime: { name: 'node', version: '>=22', onFail: 'error' } } }), {
    range: '26',
    reason: "the current LTS (the host's 20 is outside package.json devEngines.runtime)",
  });
  assert.deepEqual(choose({ devEngines: { runtime: [{ name: 'bun' }, { name: 'node', version: '^20 || ^22' }] } }), {
    range: '20',
    reason: "the host's major, which package.json devEngines.runtime allows",
  });
  // engines decides only between the host's major and the LTS: it names no version itself.
  assert.deepEqual(choose({ engines: { node: '>=18' } }), {
    range: '20',
    reason: "the host's major, which package.json engines allows",
  });
  assert.deepEqual(choose({ engines: { node: '>=20.25' } }), {
    range: '>=20.25.0 20.x',
    reason: "the host's major, which package.json engines allows",
  });
  assert.deepEqual(choose({ engines: { node: '^14 || ^16' } }), {
    range: '16',
    reason: 'the newest major package.json engines allows',
  });
  assert.deepEqual(choose({ engines: { node: '>=40' } }), {
    range: '>=40',
    reason: 'the lowest major package.json engines allows',
  });
  assert.throws(() => choose({ engines: { node: 'twenty' } }), /package\.json engines says "twenty"/);
  // Nothing said: the host's major, the one the tests pass with on the user's machine.
  assert.deepEqual(choose({}), { range: '20', reason: "the host's major" });
  assert.deepEqual(chooseNodeVersion({}, { ...host, nodeVersion: '22.3.0' }), {
    range: '22',
    reason: "the host's major",
  });
});

test('npm comes in the major its Node line ships, or older when that npm does not support the release', () => {
  assert.equal(npmForNode('26.12.1'), 'npm@11');
  assert.equal(npmForNode('24.1.0'), 'npm@11');
  assert.equal(npmForNode('22.23.5'), 'npm@10');
  assert.equal(npmForNode('20.20.2'), 'npm@10');
  assert.equal(npmForNode('20.3.0'), 'npm@9');
  assert.equal(npmForNode('18.12.1'), 'npm@9');
  assert.equal(npmForNode('16.20.2'), 'npm@8');
  assert.equal(npmForNode('14.21.3'), 'npm@6');
});
