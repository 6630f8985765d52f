// `worker`: a worker in the foreground; runs whose worker died continue here.
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
import { log } from '../session.js';
import { backgroundWorkerCommands } from './backgroundWorkerCommands.js';

export function workerCommand(program: Command): void {
  const command = scriptedOptions(
    providerOption(program.command('worker')).description(
      'run a worker in the foreground (Ctrl-C to stop); runs whose worker died continue here',
    ),
    ' (a fixed model latency)',
  );
  backgroundWorkerCommands(command);
  hostOptions(command).action(async (options: ScriptedOptions & HostOptions) =>
    withScriptedModel(options, (scripted) =>
      runWorkerInForeground(
        (worker) => {
          if (scripted) console.log(pc.yellow(scriptedNotice(scripted.fake.url)));
          log(
            `Worker ready on task queue ${worker.taskQueue} (sandboxes on ${worker.hostTaskQueue}); host ${worker.host.options.hostId}, ` +
              `room for ${counted(worker.host.capacity.limits.sandboxes, 'sandbox', 'sandboxes')} and ${counted(worker.host.capacity.limits.environmentBuilds, 'environment build', 'environment builds')} at once, ` +
              `workspaces in ${worker.host.options.workspaceRoot}, content store ${worker.host.options.store.describe()}. Ctrl-C to stop.`,
          );
        },
        scripted ? scriptedWorkerModel(scripted) : {},
        hostSettings(options),
      ),
    ),
  );
}

function counted(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}
