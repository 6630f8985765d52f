// What the benchmarks share: a real Temporal dev server started by the test harness (random
// ports), one worker whose model client speaks HTTP to the fake Anthropic API, and tiny
// repositories (copies of fixtures/01_off_by_one), each with the script the fake plays for it.
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import type { WorkflowHandle } from '@temporalio/client';
import type { DebugInputJson } from '../src/agent/input.js';
import type { DebugReport } from '../src/agent/report.js';
import { startDebugRun } from '../src/client.js';
import { createModelClient } from '../src/model/anthropic.js';
import { SandboxHost } from '../src/sandbox/sandboxHost.js';
import type { FakeAnthropicApi, RecordedRequest } from '../src/demo/fakeAnthropicApi.js';
import { loadFixture } from '../src/demo/fixtures.js';
import { startTestServer, startTestWorker, type TestServer, type TestWorker } from '../harness/devStack.js';
import type { Script, ScriptStep } from '../src/demo/script.js';

/** Every benchmark run asks for this model, so that token counts can be priced. */
export const benchModel = 'claude-sonnet-4-6';

export interface BenchEnvironment {
  server: TestServer;
  worker: TestWorker;
  fake: FakeAnthropicApi;
  /** A model client like the worker's (same factory, same fake API), for the plain loop. */
  anthropic: Anthropic;
  /** A SandboxHost like the worker's, for the plain loop (see openBenchEnvironment). */
  plainLoopHost: SandboxHost;
  /** A copy of fixtures/01_off_by_one named `name`, for which the fake API plays `script`. */
  tinyRepository(name: string, script: Script, extraFiles?: Record<string, string>): Promise<string>;
  runWorkflow(input: DebugInputJson, workflowId?: string): Promise<{ report: DebugReport; handle: WorkflowHandle }>;
  /** The requests the fake API recorded since the last call (and forgets them). */
  takeRequests(): RecordedRequest[];
  /** What the worker measured since the last call (and forgets it): how each model call got its conversation, and each tool's time in the host. */
  takeWorkerTimings(): WorkerTimings;
  close(): Promise<void>;
}

export interface WorkerTimings {
  transcripts: Array<{ source: 'cache' | 'query'; ms: number }>;
  toolRuns: number[];
  /** Each callModel activity function's time, and the model request within it. */
  modelCalls: Array<{ ms: number; requestMs: number }>;
}

/** The same scripted step, `count` times: a run that loops until its iteration budget ends. */
export function repeatedStep(step: ScriptStep, count: number): Script {
  return { responses: Array.from({ length: count }, () => step) };
}

export const listFilesStep: ScriptStep = {
  thought: 'Listing the files again.',
  tool_calls: [{ name: 'list_files', input: {} }],
};

/** `serverArgs`: dev server flags; `cacheConversations`: false to query every transcript (bench/variants.ts compares them). */
export async function openBenchEnvironment(
  options: {
    serverArgs?: string[];
    persistent?: false;
    cacheConversations?: boolean;
    /** The fake model's time per reply (a streamed reply is written over it). */
    latencyMs?: number;
    /** Settings of the worker, as environment variables. */
    configOverrides?: Record<string, string>;
  } = {},
): Promise<BenchEnvironment> {
  // A database file, as the embedded server of `npm run demo` keeps one (the tests' server keeps it in memory).
  const server = await startTestServer({
    persistent: options.persistent ?? true,
    extraArgs: options.serverArgs,
    metrics: true,
  });
  const folder = await mkdtemp(join(tmpdir(), 'durable-debugger-bench-'));
  // The fake API looks a script up by repository name when a request arrives, so
  // repositories can be added while it runs.
  const scripts: Record<string, Script> = {};
  let timings: WorkerTimings = { transcripts: [], toolRuns: [], modelCalls: [] };
  const worker = await startTestWorker(server, {
    fake: { scripts, latencyMs: options.latencyMs },
    configOverrides: options.configOverrides,
    onTranscript: (source, ms) => timings.transcripts.push({ source, ms }),
    onToolRun: (_tool, ms) => timings.toolRuns.push(ms),
    onModelCall: (timing) => timings.modelCalls.push(timing),
    cacheConversations: options.cacheConversations,
  });
  const fake = worker.fake;
  const anthropic = createModelClient({ apiKey: 'bench', baseURL: fake.url, timeoutMs: 30_000 });
  // Same class and options as the worker's host, but another scope label: the worker's
  // reaper removes containers of its scope whose workflow it does not know, and plain-loop
  // runs have no workflow.
  const plainLoopHost = new SandboxHost({
    ...worker.worker.host.options,
    scope: `${worker.worker.host.options.scope}/plain-loop`,
  });
  const template = await loadFixture('01_off_by_one');

  return {
    server,
    worker,
    fake,
    anthropic,
    plainLoopHost,
    async tinyRepository(name, script, extraFiles = {}) {
      const path = join(folder, name);
      await cp(template.path, path, { recursive: true });
      for (const [file, content] of Object.entries(extraFiles)) await writeFile(join(path, file), content);
      scripts[name] = script;
      return path;
    },
    async runWorkflow(input, workflowId) {
      const handle = await startDebugRun(server.client, {
        input: { model: benchModel, ...input },
        taskQueue: worker.taskQueue,
        workflowId,
      });
      return { report: (await handle.result()) as DebugReport, handle };
    },
    takeRequests() {
      return fake.requests.splice(0);
    },
    takeWorkerTimings() {
      const taken = timings;
      timings = { transcripts: [], toolRuns: [], modelCalls: [] };
      return taken;
    },
    async close() {
      await worker.stop();
      await server.stop();
      await rm(folder, { recursive: true, force: true });
    },
  };
}

/** Milliseconds per loop iteration, from the arrival times of a run's model requests. */
export function msPerIteration(requests: RecordedRequest[]): number {
  const answered = requests.filter((request) => request.status === 200);
  if (answered.length < 2) throw new Error(`need at least two model requests, got ${answered.length}`);
  const first = answered[0] as RecordedRequest;
  const last = answered[answered.length - 1] as RecordedRequest;
  return (last.receivedAt - first.receivedAt) / (answered.length - 1);
}
