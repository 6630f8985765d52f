// The end of a run, as a person reads it.
import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import pc from 'picocolors';
import { describeEnvironment } from '../agent/environment.js';
import { describeIterations } from '../agent/fallback.js';
import type { DebugReport } from '../agent/report.js';
import type { Config } from '../config.js';
import type { TestSummary } from '../agent/testResults.js';
import { printableAll } from './terminalText.js';

export function formatReport(
  untrusted: DebugReport,
  extras: { webUi?: string | null; patchFile?: string | null } = {},
): string {
  const report = printableAll(untrusted);
  const colour = report.status === 'fixed' || report.status === 'no_failing_tests' ? pc.green : pc.red;
  const lines = [
    '',
    pc.bold(`Status: ${colour(report.status)}`) + pc.dim(` (${report.stopCondition}: ${report.stopDetail})`),
  ];
  if (report.rootCause) lines.push(`${pc.bold('Root cause:')} ${report.rootCause}`);
  if (report.fixSummary) lines.push(`${pc.bold('Fix:')} ${report.fixSummary}`);
  lines.push(
    `${pc.bold('Tests:')} before ${describeTests(report.testsBefore)} → after ${describeTests(report.testsAfter)}`,
  );
  const t = report.tokens;
  lines.push(
    `${pc.bold('Work:')} ${report.iterations} iterations, ${report.toolCalls.length + (report.earlierToolCalls ?? 0)} tool calls, ${(report.durationMs / 1000).toFixed(1)} s` +
      (report.workflowRuns > 1 ? `, ${report.workflowRuns} workflow runs` : '') +
      (report.compactions > 0 ? `, context compacted ${report.compactions}×` : ''),
  );
  if (report.resumedFrom)
    lines.push(`${pc.bold('Resumed from:')} ${report.resumedFrom} (its work before the resume is counted here)`);
  lines.push(
    `${pc.bold('Tokens:')} ${t.inputTokens} input, ${t.cacheReadTokens} cache read, ${t.cacheWriteTokens} cache write, ${t.outputTokens} output · ` +
      `cost ${report.costUsd === null ? 'unknown (no price for this model)' : `$${report.costUsd.toFixed(4)}`}`,
  );
  // An environment that could not be made is the status's own story: "the sandbox image as it is" would not be true.
  if (report.environment !== undefined && !(report.environment === null && report.status === 'environment_error'))
    lines.push(
      `${pc.bold('Environment:')} ${describeEnvironment(report.environment, { lastLines: 8 }).replace(/^environment: /, '')}`,
    );
  if (report.costNote) lines.push(`${pc.bold('Cost:')} ${report.costNote}`);
  if (report.answeredBy) lines.push(`${pc.bold('Model:')} ${report.answeredBy}`);
  if (report.streamNote) lines.push(`${pc.bold('Replies:')} ${report.streamNote}`);
  // With a fallback model (or a resume on another one), each model's share, the fallback's calls named.
  if ((report.modelUsage?.length ?? 0) > 1 || report.modelUsage?.some((usage) => usage.fallback)) {
    for (const usage of report.modelUsage ?? []) {
      const cost = usage.costUsd === null ? 'cost unknown' : `$${usage.costUsd.toFixed(4)}`;
      lines.push(
        `  ${usage.model}${usage.fallback ? pc.yellow(' (fallback)') : ''}: ${usage.calls} call${usage.calls === 1 ? '' : 's'}, ${describeIterations(usage.iterations)} · ${cost}`,
      );
    }
  }
  if (report.attempts) {
    lines.push(
      pc.bold(`Attempts:`) +
        ` ${report.attempts.length}, kept ${report.chosenAttempt ? `attempt ${report.chosenAttempt}` : 'none'} (iterations, tokens and cost above are their sums; tool calls are the kept attempt’s)`,
    );
    for (const attempt of report.attempts) {
      const cost = attempt.costUsd === null ? 'cost unknown' : `$${attempt.costUsd.toFixed(4)}`;
      const mark = attempt.attempt === report.chosenAttempt ? pc.green('✔ chosen ') : '';
      lines.push(
        `  ${mark}${attempt.attempt}. ${attempt.status} · ${attempt.diffLines} lines changed · ${attempt.iterations} iterations · ${cost} · ${attempt.workflowId}` +
          (attempt.rootCause
            ? `\n     root cause: ${attempt.rootCause}`
            : attempt.status === 'fixed'
              ? ''
              : `\n     ${attempt.detail}`),
      );
    }
  }
  if (report.patch) {
    const size = report.fullPatch ? pc.dim(` (${report.fullPatch.bytes} bytes; the beginning:)`) : '';
    lines.push(
      pc.bold('Patch:') + (extras.patchFile ? pc.dim(` (saved to ${extras.patchFile})`) : '') + size,
      report.patch.trimEnd(),
    );
  } else {
    lines.push(`${pc.bold('Patch:')} (no changes)`);
  }
  const leftOut = report.leftOutOfPatch ?? [];
  if (leftOut.length > 0) {
    const shown = leftOut.slice(0, 10).join(', ') + (leftOut.length > 10 ? ` and ${leftOut.length - 10} more` : '');
    lines.push(
      `${pc.bold('Left out of the patch:')} ${shown} ` +
        pc.dim(
          '(files the agent never edited: test outputs, binary files commands wrote; run with --patch-all-changes to keep them)',
        ),
    );
  }
  for (const problem of report.problems ?? []) lines.push(`${pc.bold(pc.red('Problem:'))} ${problem}`);
  if (extras.webUi) lines.push(`${pc.bold('Web UI:')} ${extras.webUi}`);
  return lines.join('\n');
}

function describeTests(summary: TestSummary | null): string {
  if (!summary) return 'not run';
  if (summary.timedOut) return 'timed out';
  if (summary.outOfMemory) return `ran out of memory (${summary.outOfMemory.limitMb} MB)`;
  if (summary.missingModule) return `could not import ${summary.missingModule} (exit code ${summary.exitCode})`;
  if (summary.noTests) return `no tests ran (exit code ${summary.exitCode})`;
  if (!summary.recognized) return `exit code ${summary.exitCode}`;
  return `${summary.passed} passed, ${summary.failed} failed`;
}

/** The report's whole patch, read back from the content store when the report holds only its beginning. */
export async function wholePatch(config: Config, report: DebugReport): Promise<string> {
  // Most reports hold the whole patch: then neither the store (PostgreSQL's client) nor the patch code loads.
  if (!report.fullPatch) return report.patch;
  const [{ openContentStore }, { fullPatchOf }] = await Promise.all([
    import('../sandbox/store/openStore.js'),
    import('../sandbox/workspace/patch.js'),
  ]);
  const store = openContentStore(config.contentStore);
  try {
    return await fullPatchOf(store, { patch: report.patch, fullPatch: report.fullPatch ?? null });
  } finally {
    await store.close();
  }
}

/** Ends a followed run: saves its patch under the data folder and prints the report (text or JSON). */
export async function printFinalReport(
  config: Config,
  report: DebugReport,
  options: { webUi: string | null; json: boolean },
): Promise<void> {
  const patch = report.patch ? await wholePatch(config, report).catch(() => null) : null;
  const patchFile = patch ? await savePatch(config, report.workflowId, patch) : null;
  if (options.json) console.log(JSON.stringify({ type: 'report', report, webUi: options.webUi, patchFile }));
  else
    console.log(
      formatReport(report, { webUi: options.webUi, patchFile: patchFile && relative(process.cwd(), patchFile) }),
    );
}

async function savePatch(config: Config, workflowId: string, patch: string): Promise<string> {
  const folder = join(config.home, 'runs');
  await mkdir(folder, { recursive: true });
  const file = join(folder, `${workflowId}.patch`);
  await writeFile(file, patch);
  return file;
}
