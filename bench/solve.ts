// `npm run bench:solve`: every fixture under fixtures/ through the whole product (real Temporal
// dev server, real Docker, the worker's own model configuration), one after the other, with
// what each run cost, then the solve rate. With ANTHROPIC_API_KEY set, Claude answers (model:
// ANTHROPIC_MODEL, default claude-sonnet-4-6); without it, the fake Anthropic API plays each
// fixture's scripted responses. This is what to run to compare models and prompts.
import { availableParallelism } from 'node:os';
import type { DebugReport } from '../src/agent/report.js';
import { startWorker } from '../src/worker.js';
import { fixtureInput, loadFixtures, scriptsByName } from '../src/demo/fixtures.js';
import { runToReport, startTestServer, startTestWorker, uniqueTaskQueue } from '../harness/devStack.js';
import { number, percent, table } from './stats.js';

const fixtures = await loadFixtures();
const apiKey = process.env.ANTHROPIC_API_KEY || undefined;
const server = await startTestServer();
const config = server.config(apiKey ? { ANTHROPIC_API_KEY: apiKey } : {});
const model = config.anthropic.model;

let taskQueue: string;
let stopWorker: () => Promise<void>;
let answeredBy: string;
if (apiKey) {
  // The worker's normal configuration: the real Anthropic client from ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL).
  const worker = await startWorker({ config, address: server.address, taskQueue: uniqueTaskQueue('solve') });
  taskQueue = worker.taskQueue;
  stopWorker = () => worker.shutdown();
  answeredBy = `Claude (${model}), with ANTHROPIC_API_KEY${config.anthropic.baseURL ? ` at ${config.anthropic.baseURL}` : ''}`;
} else {
  const worker = await startTestWorker(server, { fake: { scripts: scriptsByName(fixtures) } });
  taskQueue = worker.taskQueue;
  stopWorker = () => worker.stop();
  answeredBy = `SCRIPTED responses (fixtures/*/script.json) played by the fake Anthropic API: ANTHROPIC_API_KEY is not set. Costs price the fake's token counts as ${model}.`;
}

console.log(`durable-debugger solve rate · ${new Date().toISOString()} · ${availableParallelism()} cores`);
console.log(`answered by: ${answeredBy}`);
console.log(`${fixtures.length} fixtures, one run at a time\n`);

interface Row {
  fixture: string;
  expected: string;
  report: DebugReport | null;
  error: string | null;
  seconds: number;
}

const header = [
  'fixture',
  'status',
  'expected',
  'iter',
  'tools',
  'input',
  'cache write',
  'cache read',
  'output',
  'cost',
  'time',
];
const cells = (row: Row): string[] => {
  const report = row.report;
  const tokens = report?.tokens;
  const count = (value: number | undefined) => (value === undefined ? '–' : number(value, 0));
  const status = report?.status ?? 'failed';
  return [
    row.fixture,
    status === row.expected ? status : `${status} ✗`,
    row.expected,
    count(report?.iterations),
    count(report?.toolCalls.length),
    count(tokens?.inputTokens),
    count(tokens?.cacheWriteTokens),
    count(tokens?.cacheReadTokens),
    count(tokens?.outputTokens),
    report ? (report.costUsd === null ? 'unknown' : `$${report.costUsd.toFixed(4)}`) : '–',
    `${number(row.seconds)} s`,
  ];
};

const rows: Row[] = [];
const started = performance.now();
try {
  for (const fixture of fixtures) {
    const runStarted = performance.now();
    let report: DebugReport | null = null;
    let error: string | null = null;
    try {
      ({ report } = await runToReport(
        server,
        taskQueue,
        fixtureInput(fixture),
        `solve-${fixture.name}-${process.pid}`,
      ));
    } catch (failure) {
      error = failure instanceof Error ? failure.message : String(failure);
    }
    const row = {
      fixture: fixture.name,
      expected: fixture.meta.expectedStatus,
      report,
      error,
      seconds: (performance.now() - runStarted) / 1000,
    };
    rows.push(row);
    process.stderr.write(`bench:solve: ${row.fixture} → ${report?.status ?? `failed: ${error}`}\n`);
  }
} finally {
  await stopWorker();
  await server.stop();
}

console.log(table(header, rows.map(cells)).join('\n'));
for (const row of rows) {
  if (row.error) console.log(`  ${row.fixture}: the run failed: ${row.error}`);
  else if (row.report && row.report.status !== row.expected)
    console.log(`  ${row.fixture}: ${row.report.stopCondition}: ${row.report.stopDetail}`);
}

const withFailingTests = rows.filter((row) => row.expected !== 'no_failing_tests');
const solved = withFailingTests.filter((row) => row.report?.status === 'fixed').length;
const asExpected = rows.filter((row) => row.report?.status === row.expected).length;
const costs = rows.map((row) => row.report?.costUsd ?? null);
const totalCost = costs.every((cost) => cost !== null)
  ? `$${costs.reduce((sum: number, cost) => sum + (cost ?? 0), 0).toFixed(4)}`
  : 'unknown';
console.log('');
console.log(
  `solve rate: ${solved}/${withFailingTests.length} fixtures with failing tests fixed (${percent(solved / withFailingTests.length, 0)})`,
);
console.log(
  `as fixture.json expects: ${asExpected}/${rows.length} · total cost ${totalCost} · ${number((performance.now() - started) / 1000)} s`,
);
// Scripted runs must end as expected; a model may fail a fixture without that being an error of this command.
process.exitCode = !apiKey && asExpected < rows.length ? 1 : 0;
