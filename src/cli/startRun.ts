// How `run` starts its run, in the command's session or in the background worker's for it
// (src/cli/backgroundRunService.ts): this session's model endpoint, its worker's private queue,
// and a refusal at once when nobody would answer the run's model calls.
import type { DebugInputJson } from '../agent/input.js';
import { refuseWhenNobodyServesTheModel } from './runOptions.js';
import { endpointOfSession, servedBySession, type Session } from './session.js';

/** The checked input with the session's model endpoint (whatever it said); refused when nobody would answer its model calls. */
export async function inputOfSession(session: Session, checked: DebugInputJson): Promise<DebugInputJson> {
  const input = { ...checked, modelEndpoint: undefined, ...(await endpointOfSession(session)) };
  await refuseWhenNobodyServesTheModel(session, input.modelEndpoint);
  return input;
}

/** Starts the run on the private queue of the session's worker; its workflow id. */
export async function startRunOfSession(
  session: Session,
  input: DebugInputJson,
  workflowId: string | undefined,
): Promise<string> {
  const { startDebugRun } = await import('../client.js');
  const { route, starting } = servedBySession(session);
  const handle = await startDebugRun(session.client, {
    input: { ...input, ...route },
    starting,
    taskQueue: session.config.taskQueue,
    workflowId,
  });
  return handle.workflowId;
}
