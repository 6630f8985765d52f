// The Go plan, pure: which Go a module asks for and why, what the build reads and runs, the host's
// GOPROXY as a build may use it, and the probe's list of the repository's own modules.
import assert from 'node:assert/strict';
import test from 'node:test';
import { planEnvironment } from '../../src/sandbox/environment/plan.js';
import { chooseGo } from '../../src/sandbox/environment/go/goPlan.js';
import { parseGoModFile } from '../../src/sandbox/environment/go/goModule.js';
import { ownModules } from '../../src/sandbox/environment/go/goProbes.js';
import { importedPackages, importsOf, isGoSource } from '../../src/sandbox/environment/go/goImports.js';
import { buildGoProxy, goProxyUrls, goSumDbUrl } from '../../src/sandbox/environment/go/goSettings.js';

const goMod = (lines: string) => `module example.com/m\n\n${lines}\n`;

test('the toolchain line names the release; the go directive its line, newest patch', () => {
  assert.deepEqual(chooseGo({ 'go.mod': goMod('go 1.22\n\ntoolchain go1.22.5') }), {
    kind: 'go',
    version: '1.22.5',
    reason: "go.mod's toolchain line go1.22.5",
  });
  assert.deepEqual(chooseGo({ 'go.mod': goMod('go 1.23.4') }), {
    kind: 'go',
    version: '1.23',
    reason: "go.mod's go directive 1.23.4: the newest 1.23 release",
  });
  // A toolchain line older than the directive does not count (Go ignores it too).
  assert.equal(chooseGo({ 'go.mod': goMod('go 1.23.0\ntoolchain go1.22.5') }).version, '1.23');
  // go.work's lines decide in workspace mode.
  assert.equal(chooseGo({ 'go.mod': goMod('go 1.21'), 'go.work': 'go 1.24.1\n\nuse .\n' }).version, '1.24');
  // Releases before 1.21 were never toolchain modules: the oldest line that is.
  assert.equal(chooseGo({ 'go.mod': goMod('go 1.16') }).version, '1.21');
  assert.equal(chooseGo({ 'go.mod': 'module example.com/m\n' }).version, '1.21');
});

test('go.mod: blocks, comments, replacements', () => {
  const parsed = parseGoModFile(
    'module "example.com/m" // the module\n\ngo 1.22\n\nrequire (\n\tgithub.com/google/go-cmp v0.6.0 // indirect\n\tgolang.org/x/text v0.14.0\n)\n\nreplace example.com/m/sub => ./sub\nreplace (\n\tgithub.com/google/go-cmp => github.com/google/go-cmp v0.5.9\n)\n',
  );
  assert.equal(parsed.module, 'example.com/m');
  assert.deepEqual(parsed.requires, ['github.com/google/go-cmp', 'golang.org/x/text']);
  assert.deepEqual(parsed.replaces, [
    { from: 'example.com/m/sub', to: './sub', toVersion: null },
    { from: 'github.com/google/go-cmp', to: 'github.com/google/go-cmp', toVersion: 'v0.5.9' },
  ]);
});

test('a repository with go.mod is planned as Go: the toolchain, the installer, offline tests, the probe', () => {
  const plan = planEnvironment(['go.mod', 'go.sum', 'a.go', 'sub/go.mod'], {
    'go.mod': goMod('go 1.22\n\ntoolchain go1.22.5\n\nrequire github.com/google/go-cmp v0.6.0'),
    'go.sum': 'github.com/google/go-cmp v0.6.0 h1:x\n',
    'sub/go.mod': 'module example.com/m/sub\n\ngo 1.22\n',
  });
  assert.equal(plan?.kind, 'go');
  // The release is the toolchain image's (built once per release), fetched in its build by Go's own client.
  assert.deepEqual(plan?.toolchains, []);
  assert.deepEqual(plan?.basePlan?.toolchains, [
    { kind: 'go', version: '1.22.5', reason: "go.mod's toolchain line go1.22.5" },
  ]);
  assert.deepEqual(plan?.basePlan?.installers, ['apt', 'go']);
  assert.doesNotMatch(plan?.script ?? '', /env-toolchain/);
  assert.deepEqual(plan?.installers, ['go']);
  assert.equal(plan?.testCommand, 'go test -v ./...');
  assert.deepEqual(Object.keys(plan?.files ?? {}).sort(), ['go.mod', 'go.sum', 'sub/go.mod']);
  assert.match(plan?.script ?? '', /go mod download/);
  assert.ok(plan?.containerEnv.includes('GOPROXY=off'));
  assert.ok(plan?.containerEnv.includes('GOTOOLCHAIN=local'));
  assert.equal(plan?.probes.length, 1);
  assert.match(plan?.projectInstall?.script ?? '', /go test -exec \/bin\/true/);
  // vendor/: no download, -mod=vendor in the sandbox, as Go itself would pick.
  const vendored = planEnvironment(['go.mod', 'vendor/modules.txt'], { 'go.mod': goMod('go 1.22') });
  assert.ok(vendored?.containerEnv.includes('GOFLAGS=-mod=vendor'));
  assert.doesNotMatch(vendored?.script ?? '', /go mod download/);
});

test("the repository's own modules, for the probe", () => {
  assert.deepEqual(
    ownModules({ 'go.mod': goMod('go 1.22'), 'cmp/go.mod': 'module github.com/google/go-cmp\n', 'x/go.sum': '' }),
    [
      { path: 'example.com/m', folder: '' },
      { path: 'github.com/google/go-cmp', folder: 'cmp' },
    ],
  );
});

test("the host's GOPROXY as a build uses it: its proxies, never direct", () => {
  assert.equal(buildGoProxy('https://proxy.golang.org,direct'), 'https://proxy.golang.org');
  assert.equal(
    buildGoProxy('https://goproxy.corp.example|https://proxy.golang.org,direct'),
    'https://goproxy.corp.example|https://proxy.golang.org',
  );
  assert.equal(buildGoProxy('direct'), 'off');
  assert.deepEqual(goProxyUrls('https://a.example,direct|off'), ['https://a.example']);
  assert.equal(goSumDbUrl('sum.golang.org'), 'https://sum.golang.org');
  assert.equal(goSumDbUrl('off'), null);
  assert.equal(goSumDbUrl('sum.corp.example+abcd+key https://sumdb.corp.example'), 'https://sumdb.corp.example');
});

test('the packages the sources import: declarations only, comments and strings told apart, the own modules left out', () => {
  const source = [
    '// Package notes keeps notes. import "not/a.comment"',
    '//go:build linux',
    'package notes',
    '',
    'import "fmt"',
    'import sq "github.com/mattn/go-sqlite3"',
    '/* import "golang.org/x/commented" */',
    'import (',
    '\t"database/sql" // the driver registers itself',
    '\t_ "embed"',
    '\t. "github.com/google/go-cmp/cmp"',
    '\tyaml `gopkg.in/yaml.v3`',
    '\t"example.com/m/store"',
    '\t"C"',
    ')',
    '',
    'func f() { _ = "import \\"in/a.string\\"" }',
    'import "after/the.body"',
  ].join('\n');
  assert.deepEqual(importsOf(source), [
    'fmt',
    'github.com/mattn/go-sqlite3',
    'database/sql',
    'embed',
    'github.com/google/go-cmp/cmp',
    'gopkg.in/yaml.v3',
    'example.com/m/store',
    'C',
  ]);
  assert.deepEqual(
    importedPackages(
      {
        'a.go': source,
        'b_test.go': 'package notes\nimport ("testing"; "../escape"; "x/.../y"; "a b"; "fmt")\n',
        // Files go test never compiles: the tools.go that pins commands, a generator.
        'tools.go': '//go:build tools\n\npackage m\n\nimport _ "github.com/golangci/golangci-lint/cmd/golangci-lint"\n',
        'gen.go': '//go:build ignore\n\npackage main\n\nimport "golang.org/x/tools/go/packages"\n',
      },
      ['example.com/m'],
    ),
    [
      'database/sql',
      'embed',
      'fmt',
      'github.com/google/go-cmp/cmp',
      'github.com/mattn/go-sqlite3',
      'gopkg.in/yaml.v3',
      'testing',
    ],
  );
  assert.ok(isGoSource('store/db.go') && isGoSource('db_test.go'));
  for (const ignored of ['vendor/x/a.go', 'testdata/a.go', '.hidden/a.go', '_old/a.go', 'x/_a.go', 'a.go.txt'])
    assert.equal(isGoSource(ignored), false, ignored);
});

test("a module's project install warms what its sources import first, in a layer of its own; vendor/ does not", () => {
  const plan = planEnvironment(['go.mod', 'go.sum', 'a.go'], {
    'go.mod': goMod('go 1.22\n\nrequire github.com/mattn/go-sqlite3 v1.14.53'),
    'go.sum': 'github.com/mattn/go-sqlite3 v1.14.53 h1:x\n',
  });
  const warmup = plan?.projectInstall?.warmup;
  assert.ok(warmup);
  assert.equal(warmup.reads('a.go'), true);
  const summary = warmup.summary({
    'a.go': 'package m\nimport (\n"example.com/m/sub"\n"github.com/mattn/go-sqlite3"\n)\n',
  });
  assert.equal(summary, 'github.com/mattn/go-sqlite3');
  const layer = warmup.plan(summary);
  assert.equal(layer?.files['.durable-debugger-imports'], 'github.com/mattn/go-sqlite3\n');
  assert.deepEqual(Object.keys(layer?.files ?? {}).sort(), ['.durable-debugger-imports', 'go.mod', 'go.sum']);
  // No network, no repository: only the module's files and the list.
  assert.deepEqual(layer?.installers, []);
  assert.equal(layer?.needsRepository, false);
  assert.match(layer?.script ?? '', /GOPROXY=off/);
  assert.match(layer?.script ?? '', /go build \$packages/);
  assert.equal(warmup.plan(''), null);
  const vendored = planEnvironment(['go.mod', 'vendor/modules.txt'], { 'go.mod': goMod('go 1.22') });
  assert.equal(vendored?.projectInstall?.warmup, undefined);
});
