// `run <repo>`: start a run and follow it live to its report.
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import pc from 'picocolors';
import { applyFix, exitCodeFor, follow, withSession } from '../commandSupport.js';
import {
  checkedRunInput,
  noteConservativePrice,
  refuseWhenNobodyServesTheModel,
  runOptions,
  type RunOptions,
} from '../runOptions.js';
import { foregroundWorkerFlag, leaseEarly, workerForCommand } from '../backgroundWorker.js';
import { endpointOfSession, servedBySession } from '../session.js';

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
    .action(async (repo: string, options: RunOptions & { foregroundWorker?: boolean }) => {
      // Checked before anything connects or starts: a mistake is answered at once.
      const config = loadConfig();
      const checked = checkedRunInput(repo, options, config.runDefaults);
      const early = leaseEarly(config, options);
      return withSession(async (session) => {
        const input = { ...checked, ...(await endpointOfSession(session)) };
        await refuseWhenNobodyServesTheModel(session, input.modelEndpoint);
        noteConservativePrice(input, session);
        const worker = await workerForCommand(session, options, early);
        try {
          const { startDebugRun } = await import('../../client.js');
          const { route, starting } = servedBySession(session);
          const handle = await startDebugRun(session.client, {
            input: { ...input, ...route },
            starting,
            taskQueue: session.config.taskQueue,
            workflowId: options.id,
          });
          if (!options.json) console.log(`${pc.bold('Run:')} ${handle.workflowId}`);
          const report = await follow(session, handle.workflowId, Boolean(options.json));
          process.exitCode = exitCodeFor(report);
          if (options.apply && report.status === 'fixed') await applyFix(session, report, repo, Boolean(options.json));
        } finally {
          await worker.shutdown();
        }
      }).finally(() => early.then((lease) => lease?.end()));
    });
}
