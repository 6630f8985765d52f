// Data at rest is its user's alone (issue 33, item 8): the real CLI, run with the usual umask 022,
// creates its data home 0700 and the embedded server's temporal.db (every transcript) 0600; and
// `doctor` warns when config.json (which may hold an API key) or the data home is open to other
// users, with the chmod that fixes it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../../harness/devStack.js';
import { runCli } from '../support/cli.js';

let root: string;
let home: string;
let configFile: string;
let environment: NodeJS.ProcessEnv;

before(async () => {
  process.umask(0o022);
  root = await mkdtemp(join(tmpdir(), 'private-data-'));
  await chmod(root, 0o755);
  home = join(root, 'data');
  configFile = join(root, 'config.json');
  await writeFile(configFile, JSON.stringify({ settings: { ANTHROPIC_API_KEY: 'sk-ant-private-data-test' } }), {
    mode: 0o644,
  });
  environment = {
    DURABLE_DEBUGGER_HOME: home,
    DURABLE_DEBUGGER_CONFIG: configFile,
    TEMPORAL_ADDRESS: '',
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
  };
});

after(async () => {
  try {
    process.kill(Number(readFileSync(join(home, 'temporal.pid'), 'utf8')), 'SIGTERM');
  } catch {
    // The server never started.
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  await rm(root, { recursive: true, force: true });
});

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

test('the CLI creates its data home 0700 and the server database 0600, whatever the umask it was started with', async () => {
  const listed = await runCli({ address: '', home }, ['list'], environment);
  assert.equal(listed.code, 0, listed.output);
  assert.equal((await modeOf(home)).toString(8), '700');
  assert.equal((await modeOf(join(home, 'temporal.db'))).toString(8), '600');
});

type DoctorCheck = { name: string; status: string; detail: string; fix?: string };

async function privateDataCheck(): Promise<DoctorCheck | undefined> {
  const doctor = await runCli({ address: '', home }, ['doctor', '--json'], environment);
  const checks = JSON.parse(doctor.stdout.trim().split('\n').pop() as string) as { checks: DoctorCheck[] };
  assert.ok(!doctor.output.includes('sk-ant-private-data-test'), 'doctor printed the key');
  return checks.checks.find((check) => check.name === 'private data');
}

test('`doctor` warns on a config.json or data home other users can read, with the chmod that fixes it', async () => {
  await chmod(home, 0o755);
  const open = await privateDataCheck();
  assert.equal(open?.status, 'warn', JSON.stringify(open));
  assert.match(open?.detail ?? '', /config\.json .* is open to other users \(mode 0644\)/);
  assert.match(open?.detail ?? '', /the data home .* is open to other users \(mode 0755\)/);
  assert.equal(open?.fix, `chmod 600 ${configFile} && chmod 700 ${home}`);

  await chmod(configFile, 0o600);
  await chmod(home, 0o700);
  assert.equal((await privateDataCheck())?.status, 'ok');
});
