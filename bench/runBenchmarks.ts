// `npm run bench`: what durability costs and what it saves, measured side by side in one run on
// the real Temporal dev server, real Docker and the real Anthropic SDK talking to the fake API.
// Prints ratios first, then every figure as min/median/max, and saves the same as JSON.
//   npm run bench                        all sections, saved to bench/results/latest.json (the cluster
//                                        section is skipped, saying so, when no cluster is built)
//   npm run bench -- overhead history    some sections only (not saved)
//   BENCH_REPETITIONS=7 npm run bench    more repetitions (at least 5)
//   BENCH_COLD_ROUNDS=5 npm run bench -- environment   more cold builds per repository (odd; default 3)
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, platform, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  formatClusterThroughput,
  measureClusterThroughput,
  type ClusterThroughputResult,
} from './clusterThroughput.js';
import { openBenchEnvironment } from './benchStack.js';
import { formatCommandStartup, measureCommandStartup, type CommandStartupResult } from './commandStartup.js';
import { formatEnvironmentBuild, measureEnvironmentBuild, type EnvironmentBuildResult } from './environmentBuild.js';
import { formatRustEnvironments, measureRustEnvironments, type RustEnvironmentCost } from './rustEnvironments.js';
import { formatCppEnvironments, measureCppEnvironments, type CppEnvironmentCost } from './cppEnvironments.js';
import { formatGoEnvironments, measureGoEnvironments, type GoEnvironmentCost } from './goEnvironments.js';
import { formatJavaEnvironments, measureJavaEnvironments, type JavaEnvironmentCost } from './javaEnvironments.js';
import { formatDispatchFloor, measureDispatchFloor, type DispatchFloorResult } from './dispatchFloor.js';
import { formatHistoryGrowth, measureHistoryGrowth, type HistoryGrowthResult } from './historyGrowth.js';
import {
  floorSentence,
  formatOverhead,
  goals,
  measureOverhead,
  modelCallMs,
  verdict,
  type OverheadResult,
} from './overhead.js';
import { formatSandboxCost, measureSandboxCost, type SandboxCostResult } from './sandboxCost.js';
import { number, percent, signed } from './stats.js';
import { formatThroughput, measureThroughput, type ThroughputResult } from './throughput.js';
import { cacheableGoal, formatTokenEconomy, measureTokenEconomy, type TokenEconomyResult } from './tokenEconomy.js';

interface Results {
  overhead?: OverheadResult;
  sandbox?: SandboxCostResult;
  history?: HistoryGrowthResult;
  tokens?: TokenEconomyResult;
  throughput?: ThroughputResult;
  environment?: EnvironmentBuildResult;
  rust?: RustEnvironmentCost[];
  cpp?: CppEnvironmentCost[];
  go?: GoEnvironmentCost[];
  java?: JavaEnvironmentCost[];
  floor?: DispatchFloorResult;
  cluster?: ClusterThroughputResult;
  startup?: CommandStartupResult;
}
type Section = keyof Results;
const sections: Section[] = [
  'overhead',
  'sandbox',
  'history',
  'tokens',
  'throughput',
  'floor',
  'environment',
  'startup',
  'cluster',
];

const started = performance.now();
const repetitions = Number(process.env.BENCH_REPETITIONS ?? 5);
if (!Number.isInteger(repetitions) || repetitions < 5)
  throw new Error('BENCH_REPETITIONS must be a whole number of at least 5');
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !sections.includes(name as Section));
if (unknown.length > 0) throw new Error(`Unknown section(s) ${unknown.join(', ')}; choose from ${sections.join(', ')}`);
const chosen = wanted.length > 0 ? (wanted as Section[]) : sections;

const machine = {
  cores: availableParallelism(),
  cpu: cpus()[0]?.model ?? 'unknown',
  memoryGb: Math.round(totalmem() / 2 ** 30),
  os: `${platform()} ${release()}`,
  node: process.version,
};
const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);

const results: Results = {};
const env = await openBenchEnvironment();
try {
  for (const section of chosen) {
    const sectionStarted = performance.now();
    // The cluster point is one batch per host count, side by side: repetitions do not apply.
    progress(section === 'cluster' ? 'measuring cluster…' : `measuring ${section} (${repetitions} repetitions)…`);
    if (section === 'overhead') results.overhead = await measureOverhead(env, repetitions);
    if (section === 'sandbox') results.sandbox = await measureSandboxCost(env.plainLoopHost, repetitions);
    if (section === 'history') results.history = await measureHistoryGrowth(env, repetitions);
    if (section === 'tokens') results.tokens = await measureTokenEconomy(env, repetitions);
    if (section === 'throughput') results.throughput = await measureThroughput(env, repetitions);
    if (section === 'environment') results.environment = await measureEnvironmentBuild(env.plainLoopHost, repetitions);
    if (section === 'environment') results.rust = await measureRustEnvironments(env.plainLoopHost, repetitions);
    if (section === 'environment') results.cpp = await measureCppEnvironments(env.plainLoopHost, repetitions);
    if (section === 'environment') results.go = await measureGoEnvironments(env.plainLoopHost, repetitions);
    if (section === 'environment') results.java = await measureJavaEnvironments(env.plainLoopHost, repetitions);
    if (section === 'floor') results.floor = await measureDispatchFloor(env.server, repetitions);
    if (section === 'startup') results.startup = await measureCommandStartup(env, repetitions);
    if (section === 'cluster') results.cluster = await measureClusterThroughput(progress);
    progress(`${section} took ${number((performance.now() - sectionStarted) / 1000)} s`);
  }
} finally {
  await env.close();
}
const totalSeconds = (performance.now() - started) / 1000;

const lines = [
  `durable-debugger benchmarks · ${new Date().toISOString()}`,
  `machine: ${machine.cores} cores (${machine.cpu}), ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}`,
  `Temporal: the CLI dev server (SQLite file, with the embedded server's settings: src/temporal/serverSettings.ts), started by`,
  `harness/devStack.ts; worker, fake API and`,
  `plain loop in this one process · every figure over ${repetitions} repetitions (min / median / max)`,
  '',
  'Ratios first',
  ...summary(results).map((line) => `  ${line}`),
  '',
  ...(results.overhead ? [...formatOverhead(results.overhead), ''] : []),
  ...(results.sandbox ? [...formatSandboxCost(results.sandbox), ''] : []),
  ...(results.history ? [...formatHistoryGrowth(results.history), ''] : []),
  ...(results.tokens ? [...formatTokenEconomy(results.tokens), ''] : []),
  ...(results.throughput ? [...formatThroughput(results.throughput), ''] : []),
  ...(results.environment ? [...formatEnvironmentBuild(results.environment), ''] : []),
  ...(results.rust ? [...formatRustEnvironments(results.rust), ''] : []),
  ...(results.cpp ? [...formatCppEnvironments(results.cpp), ''] : []),
  ...(results.go ? [...formatGoEnvironments(results.go), ''] : []),
  ...(results.java ? [...formatJavaEnvironments(results.java), ''] : []),
  ...(results.floor ? [...formatDispatchFloor(results.floor), ''] : []),
  ...(results.startup ? [...formatCommandStartup(results.startup), ''] : []),
  ...(results.cluster ? [...formatClusterThroughput(results.cluster), ''] : []),
  `total: ${number(totalSeconds)} s (${number(totalSeconds / 60)} min; the limit is 15 min; scripts/setup.sh before it is not counted)`,
];
console.log(lines.join('\n'));

if (chosen.length === sections.length) {
  const file = join(dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json');
  await mkdir(dirname(file), { recursive: true });
  await writeFile(
    file,
    `${JSON.stringify({ date: new Date().toISOString(), machine, repetitions, totalSeconds, results }, null, 2)}\n`,
  );
  console.log(`saved to ${file}`);
}

function summary({
  overhead,
  sandbox,
  history,
  tokens,
  throughput,
  environment,
  floor,
  startup,
  cluster,
}: Results): string[] {
  const lines: string[] = [];
  if (overhead) {
    lines.push(
      `1. Temporal adds ${number(overhead.addedMsPerIteration.median)} ms per iteration (${number(overhead.workflowMsPerIteration.median)} vs ` +
        `${number(overhead.plainLoopMsPerIteration.median)} ms): ${percent(overhead.shareOfTwoSecondRun.median, 2)} of an iteration with ${modelCallMs / 1000} s model calls. ` +
        `Goals: < ${goals.addedMsPerIteration} ms ${verdict(overhead.goalsMet.addedMsPerIteration)}, < ${percent(goals.shareOfRun, 0)} ${verdict(overhead.goalsMet.shareOfRun)}. ` +
        `Of a workflow iteration, ${number(overhead.workflowTimeline.dispatchMs.median)} ms are tasks waiting for a worker.` +
        (overhead.floorMsPerIteration ? ` ${capitalized(floorSentence(overhead))}` : ''),
    );
  }
  if (sandbox) {
    const commands = sandbox.commands
      .map(
        (cost) =>
          `${cost.name} ${signed(cost.addedMs.median)} ms (${number(cost.sandboxMs.median / cost.hostMs.median)}× the host)`,
      )
      .join(', ');
    lines.push(`2. docker exec: ${commands}; a container is ready in ${number(sandbox.containerReadyMs.median)} ms.`);
  }
  if (history) {
    const ratios = history.points.map((point) => `${number(point.ratio.median, 2)}`).join(' / ');
    lines.push(
      `3. History bytes per conversation byte at ${history.points.map((point) => point.iterations).join(' / ')} iterations: ${ratios} ` +
        `(×${number(history.ratioGrowth, 2)} from first to last). Goal flat: ${verdict(history.flat)}.`,
    );
  }
  if (tokens) {
    lines.push(
      `4. Lowest cacheable share from request 3: ${percent(tokens.lowestShareFromThirdRequest.min)} (goal ≥ ${percent(cacheableGoal, 0)}: ${verdict(tokens.goalMet)}); ` +
        `a ${tokens.requests}-iteration run costs ${number(tokens.costRatio.median, 3)}× with caching what it costs without ` +
        `($${tokens.costWithCachingUsd.median.toFixed(4)} vs $${tokens.costWithoutCachingUsd.median.toFixed(4)}).`,
    );
  }
  if (throughput) {
    const rates = throughput.points
      .map((point) => `${number(point.wholeRuns.median)}/s with ${point.concurrentRuns}`)
      .join(', ');
    const first = throughput.points[0];
    const last = throughput.points.at(-1);
    const scaling =
      first && last
        ? ` (${number(last.wholeRuns.median / first.wholeRuns.median)}× from ${first.concurrentRuns} to ${last.concurrentRuns} runs)`
        : '';
    lines.push(`5. Iterations per second over whole runs: ${rates} concurrent runs${scaling}.`);
  }
  if (floor) {
    const waits = floor.variants
      .map(
        ({ name, figures }) =>
          `${name}: ${number(figures.msPerIteration.median)} ms per iteration, ${number(figures.waitingMs.median)} ms of it waiting`,
      )
      .join('; ');
    lines.push(
      `6. Dispatch floor, a trivial workflow with two no-op activities per iteration on the same server: ${waits}.`,
    );
  }
  if (environment) {
    const kinds = environment.fixtures
      .map(
        (cost) =>
          `${cost.shape} ${number(cost.coldMs / 1000)} s cold (the installer on the host ${number(cost.hostInstallMs / 1000)} s) vs ${number(cost.foundMs)} ms found again and ${number(cost.cachedMs.median)} ms remembered (+${number(cost.addedMb, 0)} MB)`,
      )
      .join('; ');
    lines.push(`7. Environment step: ${kinds}.`);
  }
  if (startup) {
    const added = (variant: CommandStartupResult['installed']) =>
      `${number(variant.addedSeconds.median, 2)} s (${number(variant.commandSeconds.median, 1)} s for a ${number(variant.runSeconds.median, 1)} s run, ${number(variant.cpuSeconds.median, 1)} s CPU)`;
    lines.push(
      `9. A whole \`run\` command adds, installed: ${added(startup.installed)}; from the checkout: ${added(startup.checkout)}.`,
    );
  }
  if (cluster) {
    lines.push(
      'skipped' in cluster
        ? `8. Cluster: skipped: ${cluster.skipped}.`
        : `8. Cluster: ${cluster.points.map((point) => `${number(point.runsPerMinute)} runs/min with ${point.hosts} host${point.hosts === 1 ? '' : 's'}`).join(', ')}: ${number(cluster.scaling, 2)}× from 1 to 3 hosts.`,
    );
  }
  return lines;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
