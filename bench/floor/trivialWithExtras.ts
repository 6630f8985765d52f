// The trivial workflow plus what the agent's workflow does per iteration besides its two
// activities: a search-attribute upsert, the current details, activity summaries, the agent's
// activity timeouts (schedule-to-start and heartbeat, each one more timer task in the server) and
// payloads of the agent's size (a model call's input is about 1.5 KB, a tool's result 0.8 KB).
import { proxyActivities, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { searchAttributes } from '../../src/temporal/definitions.js';

type Noop = { noop(input?: string, resultBytes?: number): Promise<string | void> };
const plain = proxyActivities<Noop>({ startToCloseTimeout: '30 seconds' });
// The agent's model and tool activities' timeouts (workflows/modelCall.ts, workflows/sandboxSteps.ts).
const withAgentTimeouts = proxyActivities<Noop>({
  scheduleToStartTimeout: '30 seconds',
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '20 seconds',
});
const mode = { upsert: true, details: true, summaries: true, timeouts: true, payloads: true };
const payload = { inputBytes: 1_500, resultBytes: 800 };

export async function trivialLoopWithExtras(iterations: number, extras: Partial<typeof mode> = mode): Promise<void> {
  const { noop } = extras.timeouts ? withAgentTimeouts : plain;
  const args: Parameters<Noop['noop']> = extras.payloads ? ['x'.repeat(payload.inputBytes), payload.resultBytes] : [];
  const call = (summary: string) => (extras.summaries ? noop.executeWithOptions({ summary }, args) : noop(...args));
  for (let iteration = 1; iteration <= iterations; iteration++) {
    await call(`iteration ${iteration} · model`);
    if (extras.upsert)
      upsertSearchAttributes([
        { key: searchAttributes.iterations, value: iteration },
        { key: searchAttributes.costUsd, value: iteration / 100 },
      ]);
    if (extras.details)
      setCurrentDetails(`iteration ${iteration} · model asked for 1 tool call · ${iteration * 1000} tokens`);
    await call(`iteration ${iteration} · list_files .`);
  }
}
