// The trivial workflow plus what the agent's workflow does per iteration besides its two
// activities: a search-attribute upsert, the current details and activity summaries.
import { proxyActivities, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { searchAttributes } from '../../src/temporal/definitions.js';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '30 seconds' });
const mode = { upsert: true, details: true, summaries: true };

export async function trivialLoopWithExtras(iterations: number, extras: Partial<typeof mode> = mode): Promise<void> {
  for (let iteration = 1; iteration <= iterations; iteration++) {
    if (extras.summaries) await noop.executeWithOptions({ summary: `iteration ${iteration} · model` }, []);
    else await noop();
    if (extras.upsert) upsertSearchAttributes([{ key: searchAttributes.iterations, value: iteration }, { key: searchAttributes.costUsd, value: iteration / 100 }]);
    if (extras.details) setCurrentDetails(`iteration ${iteration} · model asked for 1 tool call · ${iteration * 1000} tokens`);
    if (extras.summaries) await noop.executeWithOptions({ summary: `iteration ${iteration} · list_files .` }, []);
    else await noop();
  }
}
