// CPU per iteration, ours beside the floor's and the plain loop's: on a machine with few cores,
// the server and the worker take turns on the same CPUs, so the CPU each burns per iteration is
// what an iteration's latency is made of. Each loop runs a short and a long run; the difference
// over the difference in iterations leaves out a run's start and end (environment, sandbox,
// final test run), which the loops do not share.
import { sandboxIdFor } from '../src/agent/ids.js';
import type { FloorRunner } from './dispatchFloor.js';
import { benchModel, listFilesStep, repeatedStep, type BenchEnvironment } from './benchStack.js';
import { runPlainLoop } from './plainLoop.js';
import { measureCpu } from './processCpu.js';
import { figure, figureTable, number, repeat, type Figure } from './stats.js';

const [shortRun, longRun] = [10, 40];

export interface IterationCpu {
  /** CPU ms per iteration of this process (worker, fake API, plain loop) and of the server. */
  ours: { workerMs: Figure; serverMs: Figure };
  floor: { workerMs: Figure; serverMs: Figure };
  plainLoop: { workerMs: Figure; serverMs: Figure };
}

export async function measureIterationCpu(
  env: BenchEnvironment,
  floorRunner: FloorRunner,
  repetitions: number,
): Promise<IterationCpu | null> {
  const serverProcessId = env.server.processId;
  if (!serverProcessId) return null;
  const repo = await env.tinyRepository('bench_iteration_cpu', repeatedStep(listFilesStep, longRun + 5));
  const input = (iterations: number) => ({ repo, budgets: { maxIterations: iterations } });
  let plainRuns = 0;
  const loops: Record<keyof IterationCpu, (iterations: number) => Promise<unknown>> = {
    ours: (iterations) => env.runWorkflow(input(iterations)),
    floor: (iterations) => floorRunner.run(iterations),
    plainLoop: (iterations) => {
      plainRuns += 1;
      const sandboxId = sandboxIdFor(`bench-iteration-cpu-${process.pid}-${plainRuns}`);
      return runPlainLoop({
        host: env.plainLoopHost,
        anthropic: env.anthropic,
        input: input(iterations),
        model: benchModel,
        sandboxId,
      });
    },
  };
  const cpuOf = async (run: () => Promise<unknown>) => {
    const {
      cpuMs: [worker = 0, server = 0],
    } = await measureCpu([process.pid, serverProcessId], run);
    return { worker, server };
  };
  const perIteration = async (loop: (iterations: number) => Promise<unknown>) => {
    const short = await cpuOf(() => loop(shortRun));
    const long = await cpuOf(() => loop(longRun));
    env.takeRequests();
    return {
      workerMs: (long.worker - short.worker) / (longRun - shortRun),
      serverMs: (long.server - short.server) / (longRun - shortRun),
    };
  };
  const rounds = await repeat(repetitions, async () => ({
    ours: await perIteration(loops.ours),
    floor: await perIteration(loops.floor),
    plainLoop: await perIteration(loops.plainLoop),
  }));
  const of = (key: keyof IterationCpu) => ({
    workerMs: figure(rounds.map((round) => round[key].workerMs)),
    serverMs: figure(rounds.map((round) => round[key].serverMs)),
  });
  return { ours: of('ours'), floor: of('floor'), plainLoop: of('plainLoop') };
}

export function formatIterationCpu(cpu: IterationCpu): string[] {
  const ms = (value: number) => `${number(value)} ms`;
  return [
    `  CPU per iteration (kernel's count, all threads; runs of ${longRun} less runs of ${shortRun} iterations):`,
    ...figureTable([
      { label: 'ours: the server process', figure: cpu.ours.serverMs, format: ms },
      { label: 'ours: this process (worker, fake API)', figure: cpu.ours.workerMs, format: ms },
      { label: 'floor: the server process', figure: cpu.floor.serverMs, format: ms },
      { label: 'floor: this process (its worker)', figure: cpu.floor.workerMs, format: ms },
      { label: 'plain loop: this process (loop, fake API)', figure: cpu.plainLoop.workerMs, format: ms },
    ]),
  ];
}
