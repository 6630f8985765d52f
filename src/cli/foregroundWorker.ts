// A worker in the foreground (`worker`, `dev`), with the scripted model when asked for.
import { scriptedModelEndpoint } from '../agent/modelEndpoint.js';
import { loadConfig } from '../config.js';
import type { ScriptedModel } from '../demo/scriptedModel.js';
import type { TemporalServer } from '../temporal/embeddedServer.js';
import type { RunningWorker, WorkerOptions } from '../worker.js';
import { log } from './session.js';

export function scriptedNotice(url: string): string {
  return (
    `SCRIPTED MODEL: model calls are answered by fixtures/<name>/script.json, played by a local fake Anthropic API (${url}), not by Claude. ` +
    'Only runs of the fixtures under fixtures/ can be answered.'
  );
}

export function scriptedWorkerModel(
  scripted: ScriptedModel,
): Pick<WorkerOptions, 'anthropic' | 'modelEndpoint' | 'describeAnswerer'> {
  return {
    anthropic: scripted.anthropic,
    modelEndpoint: scriptedModelEndpoint,
    describeAnswerer: () =>
      'scripted responses (fixtures/*/script.json) played by a local fake Anthropic API (durable-debugger dev/worker --scripted), not Claude',
  };
}

export async function runWorkerInForeground(
  announce: (worker: RunningWorker, server: TemporalServer) => void,
  model: Pick<WorkerOptions, 'anthropic' | 'modelEndpoint' | 'describeAnswerer'> = {},
): Promise<void> {
  const config = loadConfig();
  // Loaded here, not at start: the command line answers quickly without them.
  const [{ ensureTemporalServer }, { startWorker }] = await Promise.all([
    import('../temporal/embeddedServer.js'),
    import('../worker.js'),
  ]);
  const server = await ensureTemporalServer(config, log);
  const worker = await startWorker({ config, address: server.address, log, ...model });
  announce(worker, server);
  const stop = () => void worker.shutdown();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await worker.done;
}
