// One durable-debugger worker in a process of its own, so that a test can kill it for real
// (SIGKILL). Settings come from the environment as for any worker (TEMPORAL_ADDRESS,
// DURABLE_DEBUGGER_HOME, DURABLE_DEBUGGER_WORKSPACES, DURABLE_DEBUGGER_HOST_ID), plus:
//   FAKE_ANTHROPIC_URL  the fake Anthropic API the model client talks to
//   WORKER_TASK_QUEUE   the shared task queue
// It prints "ready <host task queue>" once it polls, and stops cleanly on SIGTERM.
import { loadConfig } from '../../src/config.js';
import { createModelClient } from '../../src/model/anthropic.js';
import { startWorker } from '../../src/worker.js';

const config = loadConfig();
if (!config.temporalAddress) throw new Error('TEMPORAL_ADDRESS must be set');
const worker = await startWorker({
  config,
  address: config.temporalAddress,
  anthropic: createModelClient({ apiKey: 'test-key', baseURL: process.env.FAKE_ANTHROPIC_URL, timeoutMs: 30_000 }),
  describeAnswerer: () => 'scripted responses (fake Anthropic API)',
  taskQueue: process.env.WORKER_TASK_QUEUE,
  log: (line) => console.log(line),
});
process.on('SIGTERM', () => void worker.shutdown());
console.log(`ready ${worker.hostTaskQueue}`);
await worker.done;
