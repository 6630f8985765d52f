// `dev`: the embedded Temporal server and a worker in the foreground, with the Web UI link.
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

export function devCommand(program: Command): void {
  const command = providerOption(program.command('dev'))
    .description('the embedded Temporal server and a worker in the foreground, with the Web UI link')
    .option(
      '--scripted',
      "answer model calls with the fixtures' scripted responses (offline, no API key; fixture runs only)",
    )
    .option(
      '--reply-delay <ms>',
      'with --scripted: pause before each scripted reply, to watch or steer a run',
      positiveInteger,
    );
  hostOptions(command).action(async (options: { scripted?: boolean; replyDelay?: number } & HostOptions) => {
    // Loaded when used: the command line answers quickly without the demo's modules.
    const { startScriptedModel } = await import('../../demo/scriptedModel.js');
    const scripted = options.scripted ? await startScriptedModel({ latencyMs: options.replyDelay }) : null;
    try {
      await runWorkerInForeground(
        (worker, server) => {
          console.log(`Temporal server ${server.address}${server.uiUrl ? ` · Web UI ${server.uiUrl}` : ''}`);
          if (scripted) console.log(pc.yellow(scriptedNotice(scripted.fake.url)));
          console.log(
            `Worker on task queue ${worker.taskQueue}. Start runs with \`durable-debugger start <repo>\` or the Temporal CLI. Ctrl-C to stop.`,
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
