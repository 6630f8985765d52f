// `durable-debugger doctor`: each part a run needs, checked without changing anything, one line
// each with the command that fixes it.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import type { Connection } from '@temporalio/client';
import type Docker from 'dockerode';
import type { Config } from '../config.js';
import { createModelClient } from '../model/anthropic.js';
import { connectTemporal } from '../temporal/clientConnection.js';
import { portAnswers } from '../temporal/embeddedServer.js';
import { searchAttributeRegistrations } from '../temporal/searchAttributes.js';
import { checkDataHome } from './dataMigration.js';
import { checkDocker } from './dockerEngine.js';
import { errorText, type CheckResult } from './parts.js';
import { checkPrivateData } from './privateData.js';
import { checkSandboxImage } from './sandboxImage.js';
import { checkTemporalCli } from './temporalCli.js';

const run = promisify(execFile);
const gibibyte = 1024 ** 3;

export async function runDoctor(config: Config, docker: Docker): Promise<CheckResult[]> {
  const dockerCheck = checkDocker(docker);
  return Promise.all([
    Promise.resolve(checkDataHome(config)),
    checkPrivateData(config),
    checkDiskSpace(config),
    dockerCheck,
    dockerCheck.then((engine) =>
      engine.status === 'ok'
        ? checkSandboxImage(docker, config.sandboxImage)
        : { name: 'sandbox image', status: 'fail' as const, detail: 'not checked: the Docker engine does not answer' },
    ),
    dockerCheck.then((engine) =>
      engine.status === 'ok'
        ? checkEnvironmentImages(docker)
        : {
            name: 'environment images',
            status: 'warn' as const,
            detail: 'not checked: the Docker engine does not answer',
          },
    ),
    checkTemporalCli(config),
    checkTemporalServer(config),
    checkModelApi(config),
    checkRegistries(),
  ]);
}

/** Environment images built by earlier versions keep the host's package settings (registry credentials) in Config.Env. */
async function checkEnvironmentImages(docker: Docker): Promise<CheckResult> {
  const name = 'environment images';
  try {
    const { listEnvironmentImages } = await import('../sandbox/environment/imageList.js');
    const images = await listEnvironmentImages(docker);
    const stale = images.filter((image) => image.hostSettings.length > 0);
    if (stale.length === 0) return { name, status: 'ok', detail: `${images.length} on this Docker engine` };
    const settings = [...new Set(stale.flatMap((image) => image.hostSettings))].join(', ');
    return {
      name,
      status: 'warn',
      detail: `${stale.length} of ${images.length}, built by an earlier version, keep host settings in their configuration (${settings}) and are never reused`,
      fix: 'durable-debugger env prune --stale',
    };
  } catch (error) {
    return { name, status: 'warn', detail: `cannot tell (${errorText(error)})` };
  }
}

/** The data home's file system: environment images and workspaces take room. */
async function checkDiskSpace(config: Config): Promise<CheckResult> {
  const name = 'disk space';
  let folder = config.home;
  while (!existsSync(folder)) folder = dirname(folder);
  try {
    const stats = await statfs(folder);
    const free = Number(stats.bavail) * Number(stats.bsize);
    const detail = `${(free / gibibyte).toFixed(1)} GiB free for ${config.home}`;
    if (free < gibibyte)
      return { name, status: 'fail', detail, fix: 'free some space (or set DURABLE_DEBUGGER_HOME to a roomier disk)' };
    if (free < 5 * gibibyte)
      return { name, status: 'warn', detail, fix: 'environment images and workspaces may need more' };
    return { name, status: 'ok', detail };
  } catch (error) {
    return { name, status: 'warn', detail: `cannot tell (${errorText(error)})` };
  }
}

/** TEMPORAL_ADDRESS's server, or the embedded one when it runs: the namespace and our search attributes. */
async function checkTemporalServer(config: Config): Promise<CheckResult> {
  const name = 'Temporal server';
  const address = config.temporalAddress ?? `127.0.0.1:${config.temporalPort}`;
  const [host, port] = splitAddress(address);
  if (!(await portAnswers(host, port, 3_000))) {
    if (!config.temporalAddress)
      return {
        name,
        status: 'ok',
        detail: `the embedded dev server is not running; commands start it (port ${config.temporalPort})`,
      };
    return {
      name,
      status: 'fail',
      detail: `${address} does not answer`,
      fix: 'start that server, or unset TEMPORAL_ADDRESS to use the embedded one',
    };
  }
  let connection: Connection | null = null;
  try {
    connection = await connectTemporal({ address, connectTimeout: 5_000 });
    await connection.workflowService.describeNamespace({ namespace: config.namespace });
    const attributes = await connection.operatorService.listSearchAttributes({ namespace: config.namespace });
    const missing = searchAttributeRegistrations
      .map(({ name: attribute }) => attribute)
      .filter((attribute) => !(attribute in (attributes.customAttributes ?? {})));
    const detail = `${address}, namespace ${config.namespace}`;
    if (missing.length > 0)
      return {
        name,
        status: 'warn',
        detail: `${detail}; search attributes ${missing.join(', ')} not yet registered`,
        fix: 'the first worker registers them (durable-debugger worker)',
      };
    return { name, status: 'ok', detail: `${detail}, search attributes registered` };
  } catch (error) {
    return {
      name,
      status: 'fail',
      detail: `${address} answers, but not as expected: ${errorText(error)}`,
      fix: `create the namespace: temporal operator namespace create --address ${address} ${config.namespace}`,
    };
  } finally {
    await connection?.close();
  }
}

function splitAddress(address: string): [string, number] {
  const at = address.lastIndexOf(':');
  return [address.slice(0, at), Number(address.slice(at + 1))];
}

/** A token count: free, and it proves the key, the base URL and the model at once. */
async function checkModelApi(config: Config): Promise<CheckResult> {
  const name = 'model API';
  const { apiKey, baseURL, model } = config.anthropic;
  const target = baseURL ?? 'https://api.anthropic.com';
  if (!apiKey)
    return {
      name,
      status: 'warn',
      detail: 'ANTHROPIC_API_KEY is not set: runs wait for a worker that has a key',
      fix: 'export ANTHROPIC_API_KEY=… (and ANTHROPIC_BASE_URL for a gateway); `durable-debugger demo` works without one',
    };
  try {
    const client = createModelClient({ apiKey, baseURL, timeoutMs: 15_000 });
    await client.messages.countTokens({ model, messages: [{ role: 'user', content: 'ping' }] });
    return { name, status: 'ok', detail: `${target} answers for ${model}` };
  } catch (error) {
    const status = (error as { status?: number }).status;
    const fix =
      status === 401 || status === 403
        ? 'the key is refused: check ANTHROPIC_API_KEY'
        : status === 404
          ? `check the model id (${model}) and ANTHROPIC_BASE_URL`
          : 'check ANTHROPIC_BASE_URL and the network';
    return { name, status: 'fail', detail: `${target}: ${errorText(error)}`, fix };
  }
}

/** The registries environment builds install from (the host's pip and npm settings name them). */
async function checkRegistries(): Promise<CheckResult> {
  const name = 'package registries';
  const pip =
    process.env.PIP_INDEX_URL ||
    (await configured('python3', ['-m', 'pip', 'config', 'get', 'global.index-url'])) ||
    'https://pypi.org/simple/';
  const npm = process.env.npm_config_registry || process.env.NPM_CONFIG_REGISTRY || 'https://registry.npmjs.org/';
  const results = await Promise.all(
    [pip, npm].map(async (url) => {
      try {
        const response = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(8_000) });
        return response.status < 500 ? null : `${url} (HTTP ${response.status})`;
      } catch (error) {
        return `${url} (${errorText((error as { cause?: unknown }).cause ?? error)})`;
      }
    }),
  );
  const unreachable = results.filter((result): result is string => result !== null);
  if (unreachable.length === 0) return { name, status: 'ok', detail: `${pip} and ${npm} answer` };
  return {
    name,
    status: 'warn',
    detail: `not reachable: ${unreachable.join(', ')}; repositories with dependencies cannot get an environment built`,
    fix: 'check the network, the proxy (HTTPS_PROXY) and the registry settings (pip config, .npmrc)',
  };
}

async function configured(command: string, args: string[]): Promise<string> {
  return run(command, args, { timeout: 10_000 }).then(
    ({ stdout }) => stdout.trim(),
    () => '',
  );
}
