// durable-debugger as an MCP server (`durable-debugger mcp`): tools for another agent (Claude
// Code, Claude Desktop, an IDE's agent) to start a debugging run on a repository, watch it, steer
// it, approve or reject its fix, resume it and list runs; resources for a run's report and patch.
// Runs are ordinary durable runs on Temporal: the client may disconnect, this server may stop and
// start again, and the run goes on (this process's worker, or any other, serves it).
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { z } from 'zod';
import type { DebugInputJson } from '../agent/input.js';
import type { DebugReport } from '../agent/report.js';
import { startDebugRun, webUiLink } from '../client.js';
import { approveUpdate, hintSignal, rejectUpdate, statusQuery, stopSignal } from '../temporal/definitions.js';
import { writingOf } from '../temporal/writingNow.js';
import { answerApproval, UsageError } from './commandSupport.js';
import { resumeAttempts, resumeSingleRun } from './resumeRun.js';
import { formatReport, wholePatch } from './printReport.js';
import { refuseWhenNobodyServesTheModel } from './runOptions.js';
import { printable } from './terminalText.js';
import { recentRuns } from './recentRuns.js';
import { endpointOfSession, queryClosedRun, servedBySession, type Session } from './session.js';

const workflowIdField = z.string().min(1).describe('the run’s workflow id, as start_run or list_runs gave it');

type ToolResult = { content: Array<{ type: 'text'; text: string }>; structuredContent?: Record<string, unknown> };

function answer(text: string, structured?: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: structured } : {}) };
}

function plain(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}

/** An MCP server over one Temporal session (and the worker that serves this process's runs). */
export function createMcpServer(session: Session, version: string): McpServer {
  const server = new McpServer(
    { name: 'durable-debugger', version },
    {
      instructions:
        'durable-debugger fixes the bug behind a repository’s failing tests in a durable run: start_run returns a workflow id at once; ' +
        'then wait_for_report (or get_status) until it ends, and read the report and patch. Runs survive this server’s restarts.',
    },
  );
  const client = session.client;
  const handleOf = (workflowId: string) => client.workflow.getHandle(workflowId);

  server.registerTool(
    'start_run',
    {
      title: 'Start a debugging run',
      description:
        'Start a durable run that finds and fixes the bug behind the failing tests of a repository (a folder on this machine). ' +
        'Returns the workflow id at once; follow it with wait_for_report or get_status.',
      inputSchema: {
        repo: z
          .string()
          .min(1)
          .describe('the repository’s folder: absolute, or relative to the server’s working folder'),
        goal: z.string().min(1).optional().describe('what to achieve, in words (default: make the failing tests pass)'),
        testCommand: z.string().min(1).optional().describe('the command that runs the tests (default: detected)'),
        model: z.string().min(1).optional().describe('the Claude model id, as the provider names it'),
        fallbackModel: z
          .string()
          .min(1)
          .optional()
          .describe('a model to call when the first keeps answering overloaded'),
        maxIterations: z.number().int().min(1).max(10_000).optional(),
        maxCostUsd: z.number().positive().optional(),
        maxMinutes: z.number().positive().optional(),
        allowCommands: z.boolean().optional().describe('give the agent a shell in the sandbox'),
        allowTestEdits: z.boolean().optional().describe('let the agent change test files'),
        approve: z.boolean().optional().describe('after a verified fix, wait for approve or reject'),
        workflowId: z.string().min(1).optional().describe('the workflow id (default: debug-<repo>-<time>)'),
      },
    },
    async (args) => {
      const repo = isAbsolute(args.repo) ? args.repo : resolve(process.cwd(), args.repo);
      if (!existsSync(repo)) throw new UsageError(`The repository "${repo}" does not exist on the server’s machine.`);
      const budgets = {
        ...(args.maxIterations ? { maxIterations: args.maxIterations } : {}),
        ...(args.maxCostUsd ? { maxCostUsd: args.maxCostUsd } : {}),
        ...(args.maxMinutes ? { maxMinutes: args.maxMinutes } : {}),
      };
      const input: DebugInputJson = {
        repo,
        ...(args.goal ? { goal: args.goal } : {}),
        ...(args.testCommand ? { testCommand: args.testCommand } : {}),
        ...(args.model ? { model: args.model } : {}),
        ...(args.fallbackModel ? { fallbackModel: args.fallbackModel } : {}),
        ...(Object.keys(budgets).length ? { budgets } : {}),
        ...(args.allowCommands ? { allowCommands: true } : {}),
        ...(args.allowTestEdits ? { allowTestEdits: true } : {}),
        ...(args.approve ? { approve: true } : {}),
        ...(await endpointOfSession(session)),
        ...servedBySession(session).route,
      };
      // Without a key, and nobody serving runs without one, say what to set instead of starting a run that waits.
      await refuseWhenNobodyServesTheModel(session, input.modelEndpoint);
      const handle = await startDebugRun(client, {
        input,
        starting: servedBySession(session).starting,
        taskQueue: session.config.taskQueue,
        workflowId: args.workflowId,
        idMustBeNew: true,
      });
      const webUi = webUiLink(session.server.uiUrl, session.config, handle.workflowId);
      return answer(
        `Started ${handle.workflowId}${webUi ? ` (Web UI: ${webUi})` : ''}. Follow it with wait_for_report.`,
        { workflowId: handle.workflowId, webUi },
      );
    },
  );

  server.registerTool(
    'get_status',
    {
      title: 'A run’s status',
      description:
        'The run’s phase, iteration, budgets, cost and last thought; while the model writes, the end of what it has written so far (writing); whether it awaits approval; for an ended run, its status.',
      inputSchema: { workflowId: workflowIdField },
    },
    async ({ workflowId }) => {
      const status = await statusOf(session, workflowId);
      return answer(JSON.stringify(status, null, 2), status);
    },
  );

  server.registerTool(
    'wait_for_report',
    {
      title: 'Wait for a run’s report',
      description:
        'Waits up to timeoutSeconds for the run to end and returns its report (without the whole patch: get_patch); ' +
        'if it is still running then, returns its status: call again.',
      inputSchema: {
        workflowId: workflowIdField,
        timeoutSeconds: z.number().min(0).max(600).default(50).describe('how long to wait (default 50)'),
      },
    },
    async ({ workflowId, timeoutSeconds }) => {
      const result = handleOf(workflowId).result() as Promise<DebugReport>;
      const ended = await Promise.race([
        result.then((report) => ({ report })),
        new Promise<null>((done) => setTimeout(() => done(null), timeoutSeconds * 1000)),
      ]);
      result.catch(() => undefined);
      if (!ended) {
        const status = await statusOf(session, workflowId);
        return answer(`Still running after ${timeoutSeconds} s:\n${JSON.stringify(status, null, 2)}`, status);
      }
      return reportAnswer(session, ended.report);
    },
  );

  server.registerTool(
    'get_report',
    {
      title: 'A run’s report',
      description: 'The report of an ended run: status, root cause, fix, tests before and after, cost, patch.',
      inputSchema: { workflowId: workflowIdField },
    },
    async ({ workflowId }) => reportAnswer(session, await endedReport(session, workflowId)),
  );

  server.registerTool(
    'get_patch',
    {
      title: 'A run’s patch',
      description:
        'The whole patch of an ended run, as a unified diff: the text with control and bidirectional characters made visible, ' +
        'the structured content’s `patch` byte-exact, as `git apply` accepts it (empty when nothing changed).',
      inputSchema: { workflowId: workflowIdField },
    },
    async ({ workflowId }) => {
      const patch = await wholePatch(session.config, await endedReport(session, workflowId));
      // The text may be shown to a person as it is: printable. Byte-exact in the structured content (and the patch resource).
      return answer(printable(patch) || '(no changes)', { patch });
    },
  );

  server.registerTool(
    'send_hint',
    {
      title: 'Send a hint',
      description: 'Tell the running agent something; it reads it at its next iteration.',
      inputSchema: { workflowId: workflowIdField, text: z.string().min(1) },
    },
    async ({ workflowId, text }) => {
      await handleOf(workflowId).signal(hintSignal, text);
      return answer('Hint sent: the agent reads it at its next iteration.');
    },
  );

  server.registerTool(
    'stop_run',
    {
      title: 'Stop a run',
      description: 'Ask a run to stop gracefully: it ends with a report (resume_run can continue it later).',
      inputSchema: { workflowId: workflowIdField, reason: z.string().min(1).optional() },
    },
    async ({ workflowId, reason }) => {
      await handleOf(workflowId).signal(stopSignal, reason ?? 'stopped through MCP');
      return answer('Stop requested: the run ends with a report.');
    },
  );

  server.registerTool(
    'approve',
    {
      title: 'Approve a fix',
      description:
        'Approve the verified fix of a run started with approve: true that awaits approval; it ends as fixed.',
      inputSchema: { workflowId: workflowIdField },
    },
    async ({ workflowId }) => {
      await answerApproval(session, workflowId, () => handleOf(workflowId).executeUpdate(approveUpdate));
      return answer(`Approved: ${workflowId} ends as fixed.`);
    },
  );

  server.registerTool(
    'reject',
    {
      title: 'Reject a fix',
      description: 'Reject the verified fix of a run that awaits approval: the agent reads the feedback and goes on.',
      inputSchema: { workflowId: workflowIdField, feedback: z.string().min(1).describe('what to change, in words') },
    },
    async ({ workflowId, feedback }) => {
      await answerApproval(session, workflowId, () =>
        handleOf(workflowId).executeUpdate(rejectUpdate, { args: [feedback] }),
      );
      return answer(`Rejected: ${workflowId} goes on with the feedback.`);
    },
  );

  server.registerTool(
    'resume_run',
    {
      title: 'Resume a run',
      description:
        'Continue an ended run (out of budget, stopped, failed) in a new linked run from its saved state, the budget that stopped it raised ' +
        '(by the amounts given, else by 10 iterations or its first amount). Returns the new workflow id.',
      inputSchema: {
        workflowId: workflowIdField,
        moreIterations: z.number().int().positive().optional(),
        moreTokens: z.number().int().positive().optional(),
        moreCostUsd: z.number().positive().optional(),
        moreMinutes: z.number().positive().optional(),
      },
    },
    async ({ workflowId, ...raise }) => {
      const handle = handleOf(workflowId);
      const description = await handle.describe();
      if (description.status.name === 'RUNNING') {
        throw new UsageError(
          `${workflowId} is still running: nothing to resume (this server’s worker serves it). A run paused on its budget takes a raise (the raiseBudget update).`,
        );
      }
      const status = await handle.query(statusQuery).catch(() => null);
      const next = status?.attempts
        ? await resumeAttempts(session, workflowId, description.status.name, status.attempts, raise, undefined)
        : await resumeSingleRun(session, workflowId, description, raise, undefined);
      return answer(`Resumed ${workflowId} as ${next}. Follow it with wait_for_report.`, { workflowId: next });
    },
  );

  server.registerTool(
    'list_runs',
    {
      title: 'List runs',
      description: 'Recent runs, newest first, with their status, iterations and cost.',
      inputSchema: { limit: z.number().int().min(1).max(200).default(20) },
    },
    async ({ limit }) => {
      const runs = await recentRuns(session, limit);
      return answer(JSON.stringify(runs, null, 2), { runs });
    },
  );

  const runResource = (kind: 'report' | 'patch') =>
    new ResourceTemplate(`durable-debugger://runs/{workflowId}/${kind}`, {
      list: async () => ({
        resources: (await recentRuns(session, 50))
          .filter((run) => run.execution === 'completed')
          .map((run) => ({
            uri: `durable-debugger://runs/${encodeURIComponent(run.workflowId)}/${kind}`,
            name: `${run.workflowId} ${kind}`,
            mimeType: kind === 'report' ? 'text/plain' : 'text/x-diff',
          })),
      }),
    });
  server.registerResource(
    'report',
    runResource('report'),
    {
      title: 'A run’s report',
      description: 'The report of an ended run, as the CLI prints it.',
      mimeType: 'text/plain',
    },
    async (uri, { workflowId }) => {
      const report = await endedReport(session, decodeURIComponent(String(workflowId)));
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: plain(formatReport(report)) }] };
    },
  );
  server.registerResource(
    'patch',
    runResource('patch'),
    {
      title: 'A run’s patch',
      description: 'The whole patch of an ended run (git apply accepts it).',
      mimeType: 'text/x-diff',
    },
    async (uri, { workflowId }) => {
      const report = await endedReport(session, decodeURIComponent(String(workflowId)));
      return { contents: [{ uri: uri.href, mimeType: 'text/x-diff', text: await wholePatch(session.config, report) }] };
    },
  );
  return server;
}

/** A running run's status query; an ended run's from a worker's replay, or else from its report. */
async function statusOf(session: Session, workflowId: string): Promise<Record<string, unknown>> {
  const handle = session.client.workflow.getHandle(workflowId);
  const description: WorkflowExecutionDescription = await handle.describe();
  const execution = description.status.name;
  if (execution === 'RUNNING') {
    const writing = writingOf(handle, description);
    return { workflowId, execution: 'running', ...(await handle.query(statusQuery)), ...(writing ? { writing } : {}) };
  }
  const report = execution === 'COMPLETED' ? ((await handle.result().catch(() => null)) as DebugReport | null) : null;
  const status = await queryClosedRun(session, description.taskQueue, () => handle.query(statusQuery));
  return {
    workflowId,
    execution: execution.toLowerCase(),
    ...(report
      ? {
          status: report.status,
          stopCondition: report.stopCondition,
          stopDetail: report.stopDetail,
          costUsd: report.costUsd,
        }
      : {}),
    ...(status ? { phase: status.phase, iteration: status.iteration, model: status.model } : {}),
  };
}

/** The report of an ended run; a running one is the caller's mistake to be told about. */
async function endedReport(session: Session, workflowId: string): Promise<DebugReport> {
  const handle = session.client.workflow.getHandle(workflowId);
  const description = await handle.describe();
  if (description.status.name === 'RUNNING')
    throw new UsageError(`${workflowId} is still running: wait_for_report waits for its report.`);
  if (description.status.name !== 'COMPLETED')
    throw new UsageError(
      `${workflowId} ended ${description.status.name.toLowerCase()}, without a report: resume_run continues it from its saved state.`,
    );
  return (await handle.result()) as DebugReport;
}

function reportAnswer(session: Session, report: DebugReport): ToolResult {
  const webUi = webUiLink(session.server.uiUrl, session.config, report.workflowId);
  const { toolCalls: _calls, ...summary } = report;
  return answer(plain(formatReport(report, { webUi })), { report: summary, webUi });
}
