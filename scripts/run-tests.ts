// `npm test` (after setup): the type check, the unit tests, the integration tests on the real
// Temporal dev server and real Docker, and finally a check that no sandbox container leaked.
// Pass folder names to run only some suites: `npm test -- unit`.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { connectDocker, listProjectContainers } from '../src/sandbox/container.js';

const suites: Array<{ name: string; concurrency: number }> = [
  { name: 'unit', concurrency: 2 },
  { name: 'integration', concurrency: 1 },
];
const wanted = process.argv.slice(2);

function run(label: string, command: string, args: string[]): void {
  console.log(`\n── ${label} ──`);
  const result = spawnSync(command, args, { stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`\n${label} failed`);
    process.exit(result.status ?? 1);
  }
}

if (wanted.length === 0) {
  run('type check', 'npx', ['tsc', '--noEmit']);
  run('lint and format', 'npm', ['run', '--silent', 'lint']);
}
for (const suite of suites) {
  if (wanted.length > 0 && !wanted.includes(suite.name)) continue;
  const folder = join('test', suite.name);
  const files = readdirSync(folder)
    .filter((file) => file.endsWith('.test.ts'))
    .sort()
    .map((file) => join(folder, file));
  if (files.length === 0) continue;
  run(`${suite.name} tests`, process.execPath, [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${suite.concurrency}`,
    ...files,
  ]);
}

if (wanted.length === 0 || wanted.includes('reliability')) {
  run('reliability (quick)', process.execPath, ['--import', 'tsx', 'scripts/reliability.ts', '--quick']);
}

const leaked = await listProjectContainers(connectDocker());
if (leaked.length > 0) {
  console.error(
    `\n${leaked.length} sandbox container(s) leaked: ${leaked.map((container) => container.Names.join(',')).join(' ')}`,
  );
  process.exit(1);
}
console.log('\nAll tests passed; no sandbox container was left behind.');
