// What a quick command loads (issue 36): `--version`, `--help`, `list` and `status` answer with
// the command line and a Temporal client only, never the worker, its native core, the model SDKs
// or Docker's client. Checked on the code each command really loads (a module-load hook in the
// command's process, and every native add-on it opens), not on its time: from the checkout (tsx)
// and from the installed package (npm pack + npm install -g), whose bundle is split so that a
// command reads only its own files (dist/chunks.json says which packages each file holds).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { checkoutCli } from '../../harness/checkoutCli.js';
import { startTestServer, type TestServer } from '../../harness/devStack.js';
import { freshEnvironment, installGlobally, packTarball, type Installed } from '../../harness/installedPackage.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { loadFixture } from '../../src/demo/fixtures.js';
import { workflowType } from '../../src/temporal/definitions.js';

/** What only running a worker, calling a model or driving Docker needs. */
const onlyForHeavyCommands = [
  '@temporalio/worker',
  '@temporalio/core-bridge',
  '@anthropic-ai/sdk',
  '@anthropic-ai/bedrock-sdk',
  '@anthropic-ai/vertex-sdk',
  '@modelcontextprotocol/sdk',
  'dockerode',
];

// Loaded before the command (node --import): records each module the process loads (ESM load
// hook, then at exit every CommonJS module in require's cache) and each native add-on it opens.
const hooks = `
import { appendFileSync } from 'node:fs';
let log;
export function initialize(data) { log = data.log; }
export async function load(url, context, next) {
  appendFileSync(log, url + '\\n');
  return next(url, context);
}
`;
const preload = `
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';
const log = process.env.MODULE_LOAD_LOG;
register(new URL('./hooks.mjs', import.meta.url), { data: { log } });
const dlopen = process.dlopen;
process.dlopen = function (module, filename, ...rest) {
  appendFileSync(log, 'native:' + filename + '\\n');
  return dlopen.call(this, module, filename, ...rest);
};
const require = createRequire(import.meta.url);
process.on('exit', () => {
  appendFileSync(log, Object.keys(require.cache).map((path) => pathToFileURL(path).href + '\\n').join(''));
});
`;

let scratch: string;
let server: TestServer;
let installed: Installed;
let freshEnv: NodeJS.ProcessEnv;
let settings: Record<string, string>;
let fake: FakeAnthropicApi;
const closedRun = 'command-loading-closed-run';

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'durable-debugger-loading-'));
  writeFileSync(join(scratch, 'hooks.mjs'), hooks);
  writeFileSync(join(scratch, 'preload.mjs'), preload);
  server = await startTestServer();
  // A closed run for `status`: started where no worker serves it, then terminated.
  const handle = await server.client.workflow.start(workflowType, {
    taskQueue: 'command-loading-nobody',
    workflowId: closedRun,
    args: [],
  });
  await handle.terminate('closed for the status command');
  // The scripted model for `run`: it answers by the repository's name.
  const fixture = await loadFixture('01_off_by_one');
  fake = new FakeAnthropicApi({ scripts: { [fixture.name]: fixture.script } });
  await fake.start();
  settings = {
    TEMPORAL_ADDRESS: server.address,
    DURABLE_DEBUGGER_HOME: join(scratch, 'data'),
    NO_COLOR: '1',
    ANTHROPIC_API_KEY: 'command-loading',
    ANTHROPIC_BASE_URL: fake.url,
  };
  freshEnv = freshEnvironment(join(scratch, 'home'), join(scratch, 'prefix'), settings);
  installed = await installGlobally(await packTarball(scratch), join(scratch, 'prefix'), freshEnv);
});
after(async () => {
  for (const variant of ['checkout', 'installed'] as const)
    await loadedBy(variant, ['worker', 'stop'], join(scratch, 'stop.log'));
  await fake?.stop();
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

interface Loaded {
  code: number | null;
  output: string;
  /** The packages (node_modules folders) and native add-ons the command loaded. */
  packages: Set<string>;
}

/** Runs the command to its end under the hook; what it loaded, by package. */
function loadedBy(variant: 'checkout' | 'installed', args: string[], log: string): Promise<Loaded> {
  const command =
    variant === 'checkout' ? [...checkoutCli, ...args] : [join(installed.packageFolder, 'dist', 'cli.js'), ...args];
  const env = variant === 'checkout' ? { ...process.env, ...settings } : freshEnv;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', pathToFileURL(join(scratch, 'preload.mjs')).href, ...command], {
      env: { ...env, MODULE_LOAD_LOG: log },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output, packages: packagesIn(readFileSync(log, 'utf8')) }));
  });
}

/** A file of the bundle that dist/chunks.json does not describe: it may hold anything. */
const unlisted = 'unlisted:';

/** The packages of the logged modules: a file of the installed bundle holds those dist/chunks.json names. */
function packagesIn(log: string): Set<string> {
  const dist = join(installed.packageFolder, 'dist');
  const listing = join(dist, 'chunks.json');
  const chunks = existsSync(listing) ? (JSON.parse(readFileSync(listing, 'utf8')) as Record<string, string[]>) : {};
  const packages = new Set<string>();
  for (const line of log.split('\n').filter(Boolean)) {
    if (line.startsWith('native:')) {
      packages.add(line);
      continue;
    }
    if (!line.startsWith('file:')) continue;
    const path = fileURLToPath(line);
    if (path.startsWith(`${dist}/`)) {
      const file = path.slice(dist.length + 1);
      for (const name of chunks[file] ?? [`${unlisted}${file}`]) packages.add(name);
      continue;
    }
    const inPackage = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
    if (inPackage) packages.add(inPackage[1] as string);
  }
  return packages;
}

const quickCommands = [['--version'], ['--help'], ['list'], ['status', closedRun]];

for (const variant of ['checkout', 'installed'] as const) {
  test(`${variant}: --version, --help, list and status load neither the worker nor its native core, the model SDKs or Docker's client`, async () => {
    for (const [index, args] of quickCommands.entries()) {
      const loaded = await loadedBy(variant, args, join(scratch, `${variant}-${index}.log`));
      const what = `${variant} ${args.join(' ')}`;
      assert.equal(loaded.code, 0, `${what}:\n${loaded.output}`);
      const heavy = [...loaded.packages].filter(
        (name) => onlyForHeavyCommands.includes(name) || name.startsWith('native:') || name.startsWith(unlisted),
      );
      assert.deepEqual(heavy, [], `${what} loaded ${heavy.join(', ')}`);
      if (args[0] === 'list' || args[0] === 'status')
        assert.ok(loaded.packages.has('@temporalio/client'), `${what} loads the Temporal client (the hook sees it)`);
      if (args[0] === 'status') assert.match(loaded.output, new RegExp(`${closedRun} · terminated`));
    }
  });

  test(`${variant}: a command that drives Docker loads Docker's client (what the hook sees)`, async () => {
    const loaded = await loadedBy(variant, ['env', 'list'], join(scratch, `${variant}-env.log`));
    assert.equal(loaded.code, 0, loaded.output);
    assert.ok(loaded.packages.has('dockerode'), [...loaded.packages].join(', '));
  });

  test(`${variant}: a run served by the warm background worker loads no Temporal package (the worker starts and follows it), no model SDK and not Docker's client`, async () => {
    const repo = (await loadFixture('01_off_by_one')).path;
    // The first run starts the background worker (a process of its own, with this command's node
    // options: the hook logs what the worker loads too); the second finds it warm.
    for (const round of ['first', 'warm']) {
      const loaded = await loadedBy(
        variant,
        ['run', repo, '--id', `command-loading-${variant}-${round}`],
        join(scratch, `${variant}-run-${round}.log`),
      );
      assert.equal(loaded.code, 0, `${variant} run (${round}):\n${loaded.output}`);
      assert.match(loaded.output, /fixed/);
      if (round === 'first') continue;
      const heavy = [...loaded.packages].filter(
        (name) =>
          onlyForHeavyCommands.includes(name) ||
          name.startsWith('@temporalio/') ||
          name.startsWith('native:') ||
          name.startsWith(unlisted),
      );
      assert.deepEqual(heavy, [], `${variant} run (${round}) loaded ${heavy.join(', ')}`);
    }
  });
}
