// `dev`: the embedded Temporal server and a worker in the foreground, with the Web UI link.
import type { Command } from 'commander';
import pc from 'picocolors';
import { providerOption } from '../commandSupport.js';
import {
  hostOptions,
  hostSettings,
  runWorkerInForeground,
  scriptedNotice,
  scriptedOptions,
  scriptedWorkerModel,
  withScriptedModel,
  type HostOptions,
  type ScriptedOptions,
} from '../foregroundWorker.js';

export function devCommand(program: Command): void {
  const command = scriptedOptions(
    providerOption(program.command('dev')).description(
      'the embedded Temporal server and a worker in the foreground, with the Web UI link',
    ),
    ', to watch or steer a run',
  );
  hostOptions(command).action(async (options: ScriptedOptions & HostOptions) =>
    withScriptedModel(options, (scripted) =>
      runWorkerInForeground(
        (worker, server) => {
          console.log(`Temporal server ${server.address}${server.uiUrl ? ` · Web UI ${server.uiUrl}` : ''}`);
          if (scripted) console.log(pc.yellow(scriptedNotice(scripted.fake.url)));
          console.log(
            `Worker on task queue ${worker.taskQueue}. Start runs with \`durable-debugger start <repo>\` or the Temporal CLI. Ctrl-C to stop.`,
          );
        },
        scripted ? scriptedWorkerModel(scripted) : {},
        hostSettings(options),
      ),
    ),
  );
}
