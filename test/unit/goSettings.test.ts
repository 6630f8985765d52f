// The host's Go settings come from `go env`, a process: read again only when what it reads changes
// (its variables, its config file, the `go` that PATH finds), not on every environment build.
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { readHostGoSettings } from '../../src/sandbox/environment/go/goSettings.js';

let home: string;
let bin: string;
let calls: string;

before(async () => {
  home = await mkdtemp(join(tmpdir(), 'go-settings-'));
  bin = join(home, 'bin');
  calls = join(home, 'calls');
  await mkdir(bin);
  // A `go` that counts its runs and prints the config file's GOPROXY as `go env -json` would.
  await writeFile(
    join(bin, 'go'),
    [
      '#!/bin/sh',
      `echo run >> ${calls}`,
      `proxy=$(sed -n 's/^GOPROXY=//p' "$GOENV" 2>/dev/null)`,
      'printf \'{"GOPROXY": "%s", "GOSUMDB": "off"}\\n\' "$proxy"',
      '',
    ].join('\n'),
  );
  await chmod(join(bin, 'go'), 0o755);
});

after(async () => {
  await rm(home, { recursive: true, force: true });
});

async function runs(): Promise<number> {
  return (await readFile(calls, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
}

test('go env runs once while its inputs stay, and again when its config file or its variables change', async () => {
  const config = join(home, 'go.env');
  await writeFile(config, 'GOPROXY=https://goproxy.one.example\n');
  const env = { PATH: `${bin}:/usr/bin:/bin`, HOME: home, GOENV: config };

  assert.equal((await readHostGoSettings(env)).GOPROXY, 'https://goproxy.one.example');
  assert.equal((await readHostGoSettings(env)).GOPROXY, 'https://goproxy.one.example');
  assert.equal(await runs(), 1);

  await writeFile(config, 'GOPROXY=https://goproxy.second.example\n');
  assert.equal((await readHostGoSettings(env)).GOPROXY, 'https://goproxy.second.example');
  assert.equal(await runs(), 2);

  assert.equal((await readHostGoSettings({ ...env, GOFLAGS: '-mod=mod' })).GOPROXY, 'https://goproxy.second.example');
  assert.equal(await runs(), 3);

  // What a caller does with its copy is not the next caller's.
  const copy = await readHostGoSettings({ ...env, GOFLAGS: '-mod=mod' });
  copy.GOPROXY = 'changed';
  assert.equal((await readHostGoSettings({ ...env, GOFLAGS: '-mod=mod' })).GOPROXY, 'https://goproxy.second.example');
  assert.equal(await runs(), 3);
});
