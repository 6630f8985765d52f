// corepack's `packageManager: name@version+sha512.<hex>`: the hash of what corepack downloads, the
// package's tarball, or for Yarn 2+ its single yarn.js (which the npm package carries as bin/yarn.js).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { EnvironmentBuildError } from '../../src/sandbox/environment/imageBuilder.js';
import { verifyPackedHash } from '../../src/sandbox/environment/toolchain.js';

const run = promisify(execFile);

test('a packageManager hash is checked against the tarball, or for Yarn 2+ against its yarn.js', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'packed-hash-'));
  try {
    await mkdir(join(folder, 'package', 'bin'), { recursive: true });
    await writeFile(join(folder, 'package', 'package.json'), '{"name":"@yarnpkg/cli-dist","version":"4.4.1"}');
    await writeFile(join(folder, 'package', 'bin', 'yarn.js'), '#!/usr/bin/env node\nconsole.log("yarn");\n');
    const tarball = join(folder, 'yarn.tgz');
    await run('tar', ['czf', tarball, '-C', folder, 'package']);
    const sha = (algorithm: string, data: Buffer) => createHash(algorithm).update(data).digest('hex');
    const tool = (algorithm: string, hex: string) => ({
      spec: '@yarnpkg/cli-dist@4.4.1',
      as: 'yarn.tgz',
      label: 'yarn',
      hash: { algorithm, hex },
    });

    await verifyPackedHash(tarball, tool('sha512', sha('sha512', await readFile(tarball))), '@yarnpkg/cli-dist@4.4.1');
    const yarnJs = await readFile(join(folder, 'package', 'bin', 'yarn.js'));
    await verifyPackedHash(tarball, tool('sha224', sha('sha224', yarnJs)), '@yarnpkg/cli-dist@4.4.1');
    await assert.rejects(
      verifyPackedHash(
        tarball,
        tool('sha256', sha('sha256', Buffer.from('another release'))),
        '@yarnpkg/cli-dist@4.4.1',
      ),
      (error: unknown) =>
        error instanceof EnvironmentBuildError &&
        /packageManager pins @yarnpkg\/cli-dist@4\.4\.1 with sha256 .*has another hash.*corepack use yarn@4\.4\.1/.test(
          error.message,
        ),
    );
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
