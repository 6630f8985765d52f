// `npm run reliability`: fault scenarios on the real dev server, real Docker and the fake API,
// one row per scenario. `--quick` runs the short variant that `npm test` includes (worker
// kills, model faults, cancel and terminate). `--cluster` runs them on the cluster of
// `npm run cluster` (started if needed) with three worker hosts that share no folder. Exits non-zero when a row misses its target:
// every run ends as expected, no lost work, no leaked container.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { projectRoot } from '../src/config.js';
import { loadFixture, scriptsByName } from '../src/demo/fixtures.js';
import { Lab } from '../harness/reliability/lab.js';
import { Scenarios, type ScenarioRow } from '../harness/reliability/scenarios.js';

const quick = process.argv.includes('--quick');
const onCluster = process.argv.includes('--cluster');
// On the cluster, 07 (whose short command timeout is the point of the fixture) is left out: with
// three hosts, the server and PostgreSQL on the same 2 cores, its fixed test suite itself took over
// the 5 s it then had (the patch was right, the verification timed out), which says nothing about
// the cluster. (On one host at load 12, a model-faults run of the quick variant missed its end too,
// most likely the same way; its timeout is now 15 s.)
const fixtureNames = [
  '01_off_by_one',
  '02_bug_in_src_package',
  '05_two_bugs_rerun',
  ...(onCluster ? [] : ['07_infinite_loop_timeout']),
  '11_js_multi_file',
];
const started = Date.now();

const fixtures = await Promise.all(fixtureNames.map((name) => loadFixture(name)));
const lab = new Lab({ cluster: onCluster });
await lab.start({ scripts: scriptsByName(fixtures), latencyMs: 200, retryAfterSeconds: 1, slowMs: 8_000 });
const rows: ScenarioRow[] = [];
try {
  console.log(
    `reliability${quick ? ' (quick)' : ''}${onCluster ? ` on the cluster ${lab.address}` : ''}: ${availableParallelism()} cores; fixtures ${fixtureNames.join(', ')}`,
  );
  const scenarios = new Scenarios(lab, fixtures, await Scenarios.expectationsFor(lab, fixtures));
  const hosts = ['a', 'b', 'c'];
  const plan: Array<() => Promise<ScenarioRow>> = onCluster
    ? [
        () => scenarios.hostKilled(quick ? 3 : 6, hosts),
        () => scenarios.serverKilled(quick ? 3 : 5, hosts),
        () => scenarios.postgresRestarted(quick ? 3 : 5, hosts),
        () => scenarios.load(quick ? 6 : 20, hosts),
      ]
    : quick
      ? [
          () => scenarios.workerKilled(4),
          () => scenarios.attemptsWorkerKilled(1),
          () => scenarios.modelFaults(5),
          () => scenarios.cancelAndTerminate(4),
        ]
      : [
          () => scenarios.workerKilled(20),
          () => scenarios.attemptsWorkerKilled(3),
          () => scenarios.serverKilled(5),
          () => scenarios.dockerRestarted(5),
          () => scenarios.containerKilled(5),
          () => scenarios.modelFaults(20),
          () => scenarios.cancelAndTerminate(10),
          () => scenarios.load(20),
        ];
  for (const scenario of plan) {
    const row = await scenario();
    rows.push(row);
    console.log(formatRow(row));
  }
} finally {
  await lab.stop();
}

const missed = rows.filter((row) => row.expected !== row.runs || row.lostWork !== 0 || row.leakedContainers !== 0);
console.log(`\n${formatHeader()}\n${rows.map(formatRow).join('\n')}`);
console.log(
  `\n${rows.length - missed.length} of ${rows.length} scenarios at target, in ${((Date.now() - started) / 60_000).toFixed(1)} minutes.`,
);
await mkdir(join(projectRoot, 'test-output'), { recursive: true });
await writeFile(
  join(projectRoot, 'test-output', `reliability${onCluster ? '-cluster' : ''}${quick ? '-quick' : ''}.json`),
  JSON.stringify({ rows, cores: availableParallelism() }, null, 2),
);
process.exit(missed.length === 0 ? 0 : 1);

function formatHeader(): string {
  return `${'scenario'.padEnd(58)} ${'runs'.padStart(4)} ${'expected'.padStart(8)} ${'lost work'.padStart(9)} ${'leaked'.padStart(6)}  notes`;
}

function formatRow(row: ScenarioRow): string {
  const line = `${row.scenario.padEnd(58)} ${String(row.runs).padStart(4)} ${`${row.expected}/${row.runs}`.padStart(8)} ${String(row.lostWork).padStart(9)} ${String(row.leakedContainers).padStart(6)}  ${row.notes}`;
  return [line, ...row.misses.map((miss) => `    missed: ${miss}`)].join('\n');
}
