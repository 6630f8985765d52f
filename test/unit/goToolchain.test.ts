// The Go toolchain image's plan and the host's part in it: the host records which release (no go
// needed), the build fetches it with Debian's go through the module proxy and purges that go.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { goReleaseMount, goToolchainModule, resolveGoRelease } from '../../src/sandbox/environment/go/goRelease.js';
import { goToolchainPlan } from '../../src/sandbox/environment/go/goToolchain.js';

const need = { kind: 'go', version: '1.22.5', reason: "go.mod's toolchain line go1.22.5" } as const;

test('an exact release is recorded in the toolchain folder and bound for the build, whatever the record held', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'go-release-'));
  try {
    const record = join(dir, 'go-1.22.5-linux-amd64-version');
    // A record that is no release (a broken write, a hand edit) is replaced, never passed to the build.
    await writeFile(record, '1.22.5; touch /pwned\n');
    const release = await resolveGoRelease(need, dir);
    assert.deepEqual(release, {
      name: 'go1.22.5.linux-amd64',
      bind: `${record}:${goReleaseMount}:ro`,
      note: "go 1.22.5 (go.mod's toolchain line go1.22.5)",
    });
    assert.equal(await readFile(record, 'utf8'), '1.22.5\n');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a line's release, once recorded, is read from the record: no proxy asked", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'go-release-'));
  try {
    await writeFile(join(dir, 'go-1.22-linux-amd64-version'), '1.22.12\n');
    const release = await resolveGoRelease(
      { kind: 'go', version: '1.22', reason: "go.mod's go directive 1.22: the newest 1.22 release" },
      dir,
    );
    assert.equal(release.name, 'go1.22.12.linux-amd64');
    assert.equal(release.note, "go 1.22.12 (go.mod's go directive 1.22: the newest 1.22 release)");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("the toolchain image fetches the module with Debian's go, installs it at /opt/go and purges that go, keeping gcc for cgo", () => {
  assert.equal(goToolchainModule('1.22.5'), 'golang.org/toolchain@v0.0.1-go1.22.5.linux-amd64');
  const plan = goToolchainPlan(need);
  assert.deepEqual(plan.installers, ['apt', 'go']);
  assert.deepEqual(plan.toolchains, [need]);
  const lines = plan.script.split('\n');
  const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
  // On the image with Debian's compilers, which the purge of what Debian's go added leaves alone.
  assert.match(plan.basePlan?.script ?? '', /install -y --no-install-recommends gcc g\+\+ make libc6-dev$/m);
  const order = [
    /> \/tmp\/packages-before$/,
    /install -y --no-install-recommends golang-go$/,
    /go mod download "\$module"$/,
    /^mv .* \/opt\/go$/,
    /dpkg --purge \$added/,
    /^GOTOOLCHAIN=local \/opt\/go\/bin\/go version$/,
  ].map(at);
  assert.ok(
    order.every((index, position) => index >= 0 && (position === 0 || index > (order[position - 1] as number))),
    `steps in order: ${order.join(', ')}`,
  );
  // The checksum database is Go's business: nothing turns it off.
  assert.doesNotMatch(plan.script, /GOSUMDB=off|(^|\s)(GONOSUMDB|GOPRIVATE|GOINSECURE)=[^$]|-insecure/m);
});
