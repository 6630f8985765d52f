// `worker`: a worker in the foreground; runs whose worker died continue here.
import type { Command } from 'commander';
import pc from 'picocolors';
import { positiveInteger, providerOption } from '../commandSupport.js';
import {
  hostOptions,
  hostSettings,
  runWorkerInForeground,
  scriptedNotice,
  scriptedWorkerModel,
  type HostOptions,
} from '../foregroundWorker.js';
import { log } from '../session.js';

export function workerCommand(program: Command): void {
  const command = providerOption(program.command('worker'))
    .description('run a worker in the foreground (Ctrl-C to stop); runs whose worker died continue here')
    .option(
      '--scripted',
      "answer model calls with the fixtures' scripted responses (offline, no API key; fixture runs only)",
    )
    .option(
      '--reply-delay <ms>',
      'with --scripted: pause before each scripted reply (a fixed model latency)',
      positiveInteger,
    );
  hostOptions(command).action(async (options: { scripted?: boolean; replyDelay?: number } & HostOptions) => {
    // Loaded when used: the command line answers quickly without the demo's modules.
    const { startScriptedModel } = await import('../../demo/scriptedModel.js');
    const scripted = options.scripted ? await startScriptedModel({ latencyMs: options.replyDelay }) : null;
    try {
      await runWorkerInForeground(
        (worker) => {
          if (scripted) console.log(pc.yellow(scriptedNotice(scripted.fake.url)));
          log(
            `Worker ready on task queue ${worker.taskQueue} (sandboxes on ${worker.hostTaskQueue}); host ${worker.host.options.hostId}, ` +
              `room for ${worker.host.capacity.limits.sandboxes} sandboxes and ${worker.host.capacity.limits.environmentBuilds} environment builds at once, ` +
              `workspaces in ${worker.host.options.workspaceRoot}, content store ${worker.host.options.store.describe()}. Ctrl-C to stop.`,
          );
        },
        scripted ? scriptedWorkerModel(scripted) : {},
        hostSettings(options),
      );
    } finally {
      await scripted?.stop();
    }
  });
}
