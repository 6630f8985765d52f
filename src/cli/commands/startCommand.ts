// `start <repo>`: start a run, print its workflow id and return.
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { modelTaskQueueFor, waitingForModelWorker } from '../../agent/modelEndpoint.js';
import { withSession } from '../commandSupport.js';
import { checkedRunInput, noteConservativePrice, runOptions, type RunOptions } from '../runOptions.js';
import { endpointOfSession, hasWorker, log } from '../session.js';

export function startCommand(program: Command): void {
  runOptions(
    program
      .command('start')
      .description('start a run, print its workflow id and return')
      .argument('<repo>', 'repository with failing tests'),
  ).action(async (repo: string, options: RunOptions) => {
    // Checked before anything connects or starts: a mistake is answered at once.
    const checked = checkedRunInput(repo, options, loadConfig().runDefaults);
    return withSession(async (session) => {
      const input = { ...checked, ...(await endpointOfSession(session)) };
      noteConservativePrice(input, session.config);
      const { startDebugRun } = await import('../../client.js');
      const handle = await startDebugRun(session.client, {
        input,
        taskQueue: session.config.taskQueue,
        workflowId: options.id,
      });
      console.log(handle.workflowId);
      if (!(await hasWorker(session, session.config.taskQueue))) {
        log('No worker serves the task queue yet: the run starts when one does (`durable-debugger worker` or `dev`).');
      } else if (
        !(await hasWorker(session, modelTaskQueueFor(session.config.taskQueue, input.modelEndpoint), 'activities'))
      ) {
        log(
          `No worker answers its model calls yet: ${waitingForModelWorker(input.modelEndpoint, session.config.taskQueue)}.`,
        );
      }
    });
  });
}
