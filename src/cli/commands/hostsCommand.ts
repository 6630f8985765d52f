// `hosts`: the worker hosts that serve a task queue, each with its figures read from its metrics
// endpoint, and the task queue's runs holding a sandbox and waiting for one.
import type { Command } from 'commander';
import { withSession } from '../commandSupport.js';

export function hostsCommand(program: Command): void {
  program
    .command('hosts')
    .description(
      'the worker hosts of a task queue: sandboxes, model calls, tokens, cost and tool calls from their metrics',
    )
    .option('--task-queue <name>', 'the task queue (default: DURABLE_DEBUGGER_TASK_QUEUE or durable-debugger)')
    .option('--json', 'print JSON')
    .action(async (options: { taskQueue?: string; json?: boolean }) =>
      withSession(async (session) => {
        const { describeTaskQueueHosts, formatTaskQueueView } = await import('../../temporal/workerHosts.js');
        const view = await describeTaskQueueHosts(
          session.client,
          session.config.namespace,
          options.taskQueue ?? session.config.taskQueue,
        );
        if (options.json) console.log(JSON.stringify(view));
        else for (const line of formatTaskQueueView(view)) console.log(line);
      }),
    );
}
