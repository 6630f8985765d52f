// `run <repo>`: start a run and follow it live to its report.
import type { Command } from 'commander';
import type { Socket } from 'node:net';
import pc from 'picocolors';
import type { DebugInputJson } from '../../agent/input.js';
import type { DebugReport } from '../../agent/report.js';
import { loadConfig, type Config } from '../../config.js';
import { runInBackground } from '../backgroundRun.js';
import { foregroundWorkerFlag, leaseWarmWorker, workerForCommand } from '../backgroundWorker.js';
import { applyFix, exitCodeFor, follow, withSession } from '../commandSupport.js';
import { printFinalReport } from '../printReport.js';
import { checkedRunInput, noteConservativePrice, runOptions, type RunOptions } from '../runOptions.js';
import { inputOfSession, startRunOfSession } from '../startRun.js';

type RunCommandOptions = RunOptions & { apply?: boolean; foregroundWorker?: boolean };

export function runCommand(program: Command): void {
  runOptions(
    program
      .command('run')
      .description('start a run and follow it to the end')
      .argument('<repo>', 'repository with failing tests'),
  )
    .option(
      '--apply',
      'when fixed, commit the patch on a new branch durable-debugger/<id> of the repository (a git repository)',
    )
    .option(...foregroundWorkerFlag)
    .action(async (repo: string, options: RunCommandOptions) => {
      // Checked before anything connects or starts: a mistake is answered at once.
      const config = loadConfig();
      const input = checkedRunInput(repo, options, config.runDefaults);
      noteConservativePrice(input, config);
      const json = Boolean(options.json);
      const warm = await leaseWarmWorker(config, options);
      const report = warm
        ? await runOnWarmWorker(warm, input, options.id, config, json)
        : await runInSession(input, options, json);
      process.exitCode = exitCodeFor(report);
      if (options.apply && report.status === 'fixed') await applyFix(config, report, repo, json);
    });
}

const printStarted = (json: boolean) => (workflowId: string) => {
  if (!json) console.log(`${pc.bold('Run:')} ${workflowId}`);
};

/** Started and followed by the user's warm background worker: this command connects to nothing else. */
async function runOnWarmWorker(
  lease: Socket,
  input: DebugInputJson,
  workflowId: string | undefined,
  config: Config,
  json: boolean,
): Promise<DebugReport> {
  try {
    const { report, webUi } = await runInBackground(
      lease,
      { input, workflowId },
      { json, started: printStarted(json) },
    );
    await printFinalReport(config, report, { webUi, json });
    return report;
  } finally {
    lease.end();
  }
}

/** Started and followed by this command, served by the background worker it starts (or by its own, --foreground-worker). */
function runInSession(input: DebugInputJson, options: RunCommandOptions, json: boolean): Promise<DebugReport> {
  return withSession(async (session) => {
    const started = await inputOfSession(session, input);
    const worker = await workerForCommand(session, options);
    try {
      const workflowId = await startRunOfSession(session, started, options.id);
      printStarted(json)(workflowId);
      return await follow(session, workflowId, json);
    } finally {
      await worker.shutdown();
    }
  });
}
