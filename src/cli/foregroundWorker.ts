// A worker in the foreground (`worker`, `dev`), with the scripted model when asked for.
import { InvalidArgumentError, type Command } from 'commander';
import { scriptedModelEndpoint } from '../agent/modelEndpoint.js';
import { loadConfig } from '../config.js';
import type { ScriptedModel } from '../demo/scriptedModel.js';
import type { TemporalServer } from '../temporal/embeddedServer.js';
import type { RunningWorker, WorkerOptions } from '../worker.js';
import { positiveInteger } from './commandSupport.js';
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

/** What `--scripted` and `--reply-delay` (of `dev` and `worker`) ask for. */
export interface ScriptedOptions {
  scripted?: boolean;
  replyDelay?: number;
}

/** Adds `--scripted` and `--reply-delay`; `replyDelayUse` ends the delay's help (why one would pause). */
export function scriptedOptions(command: Command, replyDelayUse: string): Command {
  return command
    .option(
      '--scripted',
      "answer model calls with the fixtures' scripted responses (offline, no API key; fixture runs only)",
    )
    .option('--reply-delay <ms>', `with --scripted: pause before each scripted reply${replyDelayUse}`, positiveInteger);
}

/** Runs `work` with the scripted model when `--scripted` asks for one (stopped after), else with none. */
export async function withScriptedModel(
  options: ScriptedOptions,
  work: (scripted: ScriptedModel | null) => Promise<void>,
): Promise<void> {
  if (!options.scripted) return work(null);
  // Loaded when used: the command line answers quickly without the demo's modules.
  const { startScriptedModel } = await import('../demo/scriptedModel.js');
  const scripted = await startScriptedModel({ latencyMs: options.replyDelay });
  try {
    await work(scripted);
  } finally {
    await scripted.stop();
  }
}

export async function runWorkerInForeground(
  announce: (worker: RunningWorker, server: TemporalServer) => void,
  model: Pick<WorkerOptions, 'anthropic' | 'modelEndpoint' | 'describeAnswerer'> = {},
  settings: Record<string, string> = {},
): Promise<void> {
  const config = loadConfig({ ...process.env, ...settings });
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

export interface HostOptions {
  maxSandboxes?: number;
  maxBuilds?: number;
  metricsPort?: number;
}

/** The worker host's flags (`worker`, `dev`): each overrides its variable. */
export function hostOptions(command: Command): Command {
  return command
    .option(
      '--max-sandboxes <n>',
      'sandboxes this host holds at once (DURABLE_DEBUGGER_MAX_SANDBOXES; default: from cores and memory)',
      positiveInteger,
    )
    .option(
      '--max-builds <n>',
      'environment builds this host runs at once (DURABLE_DEBUGGER_MAX_ENVIRONMENT_BUILDS; default: cores / 2)',
      positiveInteger,
    )
    .option(
      '--metrics-port <port>',
      'serve Prometheus metrics on this port (DURABLE_DEBUGGER_METRICS_PORT)',
      portNumber,
    );
}

export function hostSettings(options: HostOptions): Record<string, string> {
  return Object.fromEntries(
    [
      ['DURABLE_DEBUGGER_MAX_SANDBOXES', options.maxSandboxes],
      ['DURABLE_DEBUGGER_MAX_ENVIRONMENT_BUILDS', options.maxBuilds],
      ['DURABLE_DEBUGGER_METRICS_PORT', options.metricsPort],
    ]
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [key, String(value)]),
  );
}

function portNumber(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new InvalidArgumentError('expected a port number (0: any free port)');
  return port;
}
