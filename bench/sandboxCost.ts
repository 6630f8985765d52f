// 2. Sandbox cost: a hardened container made ready (create + start) as the product does it,
// and commands run in it with `docker exec` (src/sandbox/container/exec.ts), next to the same commands
// spawned directly on the host.
import { execFileSync, spawn } from 'node:child_process';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { sandboxLimitsSchema } from '../src/agent/input.js';
import { connectDocker, createSandboxContainer, removeContainer } from '../src/sandbox/container/container.js';
import { execInSandbox } from '../src/sandbox/container/exec.js';
import type { SandboxHost } from '../src/sandbox/sandboxHost.js';
import { pytestCommand } from '../src/sandbox/testCommand.js';
import { figure, figureTable, number, repeat, type Figure } from './stats.js';

export interface CommandCost {
  name: string;
  command: string;
  sandboxMs: Figure;
  hostMs: Figure;
  addedMs: Figure;
}

export interface SandboxCostResult {
  containerReadyMs: Figure;
  containerRemoveMs: Figure;
  commands: CommandCost[];
  /** The host's Python interpreter, resolved past launcher shims (pyenv's add tens of ms per start). */
  hostPython: string;
  pytestVersions: { sandbox: string; host: string };
}

const commandsToCompare = [
  { name: 'true', command: 'true' },
  { name: 'pytest, one test', command: `${pytestCommand} test_one.py` },
];

export async function measureSandboxCost(host: SandboxHost, repetitions: number): Promise<SandboxCostResult> {
  const docker = connectDocker();
  const workspace = await mkdtemp(join(tmpdir(), 'durable-debugger-bench-sandbox-'));
  await writeFile(join(workspace, 'test_one.py'), 'def test_one():\n    assert 1 + 1 == 2\n');
  for (const path of [workspace, join(workspace, 'test_one.py')]) await chown(path, host.user.uid, host.user.gid);
  let created = 0;
  const newContainer = () => {
    created += 1;
    return createSandboxContainer(docker, {
      sandboxId: `bench-sandbox-cost-${process.pid}-${created}`,
      image: host.options.image,
      workspaceDir: workspace,
      limits: sandboxLimitsSchema.parse({}),
      labels: {
        workflowId: 'bench-sandbox-cost',
        runId: 'bench',
        host: host.options.hostId,
        scope: `bench-sandbox-cost/${process.pid}`,
      },
    });
  };

  const containers: Docker.Container[] = [];
  try {
    const ready: number[] = [];
    const remove: number[] = [];
    await repeat(repetitions, async () => {
      const container = await timed(ready, newContainer);
      await timed(remove, () => removeContainer(docker, container.id));
    });

    const container = await newContainer();
    containers.push(container);
    const inSandbox = async (command: string) => {
      const result = await execInSandbox(container, command, {
        timeoutMs: 60_000,
        maxOutputBytes: 1_000_000,
        user: host.user,
      });
      if (result.exitCode !== 0)
        throw new Error(`"${command}" failed in the sandbox (exit ${result.exitCode}): ${result.output}`);
      return result.output.trim();
    };
    const hostPython = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], {
      encoding: 'utf8',
    }).trim();
    const onHost = (command: string) => spawnOnHost(command.replace(/^python3 /, `${hostPython} `), workspace);
    const pytestVersions = {
      sandbox: await inSandbox('python3 -m pytest --version'),
      host: execFileSync(hostPython, ['-m', 'pytest', '--version'], { encoding: 'utf8' }).trim(),
    };

    const commands: CommandCost[] = [];
    for (const { name, command } of commandsToCompare) {
      await inSandbox(command); // warm-up: the first exec and the first Python start are slower
      await onHost(command);
      const sandboxMs: number[] = [];
      const hostMs: number[] = [];
      await repeat(repetitions, async () => {
        await timed(sandboxMs, () => inSandbox(command));
        await timed(hostMs, () => onHost(command));
      });
      commands.push({
        name,
        command,
        sandboxMs: figure(sandboxMs),
        hostMs: figure(hostMs),
        addedMs: figure(sandboxMs.map((ms, index) => ms - (hostMs[index] as number))),
      });
    }
    return { containerReadyMs: figure(ready), containerRemoveMs: figure(remove), commands, hostPython, pytestVersions };
  } finally {
    for (const container of containers) await removeContainer(docker, container.id);
    await rm(workspace, { recursive: true, force: true });
  }
}

async function timed<T>(samples: number[], work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  samples.push(performance.now() - started);
  return result;
}

function spawnOnHost(command: string, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], {
      cwd,
      stdio: 'ignore',
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`"${command}" failed on the host (exit ${code})`)),
    );
  });
}

export function formatSandboxCost(result: SandboxCostResult): string[] {
  const ms = (value: number) => `${number(value)} ms`;
  const ratio = (cost: CommandCost) => cost.sandboxMs.median / cost.hostMs.median;
  const rows = result.commands.flatMap((cost) => [
    { label: `${cost.name}: added by docker exec`, figure: cost.addedMs, format: ms },
    { label: `${cost.name}: docker exec`, figure: cost.sandboxMs, format: ms },
    { label: `${cost.name}: spawned on the host`, figure: cost.hostMs, format: ms },
  ]);
  return [
    '2. Sandbox cost (hardened container as src/sandbox/container/container.ts creates it; commands through src/sandbox/container/exec.ts)',
    ...result.commands.map(
      (cost) => `  ${cost.name}: docker exec takes ${number(ratio(cost))}× as long as on the host (medians)`,
    ),
    ...figureTable([
      { label: 'container ready (create + start)', figure: result.containerReadyMs, format: ms },
      { label: 'container removed', figure: result.containerRemoveMs, format: ms },
      ...rows,
    ]),
    ...result.commands.map((cost) => `  ${cost.name}: \`${cost.command}\``),
    `  pytest in the sandbox: ${result.pytestVersions.sandbox}; on the host: ${result.pytestVersions.host} (${result.hostPython}).`,
  ];
}
