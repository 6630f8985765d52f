// Follows a run live: polls its `status` and `transcript` queries and prints each new thought,
// tool call and result, until the workflow closes. Works for a run started elsewhere too
// (`watch` reattaches by reading the transcript from the start).
import type { WorkflowHandle } from '@temporalio/client';
import pc from 'picocolors';
import type { Message } from '../agent/conversation.js';
import type { DebugReport } from '../agent/report.js';
import type { RunStatusView } from '../agent/runState.js';
import { describeToolCall } from '../agent/tools.js';
import { statusQuery, transcriptQuery } from '../temporal/definitions.js';

export interface FollowOptions {
  json: boolean;
  pollMs?: number;
  out?: NodeJS.WritableStream;
}

export async function followRun(handle: WorkflowHandle, options: FollowOptions): Promise<DebugReport> {
  const out = options.out ?? process.stdout;
  const interactive = !options.json && Boolean((out as NodeJS.WriteStream).isTTY);
  let printedMessages = 0;
  let transient = false;
  let thinkingSince = 0;
  let lastStatusKey = '';
  const clearTransient = () => {
    if (transient) out.write('\r\x1b[2K');
    transient = false;
  };
  const print = (line: string) => {
    clearTransient();
    out.write(`${line}\n`);
  };

  const printNew = (messages: Message[], status: RunStatusView | null) => {
    for (const [index, message] of messages.entries()) {
      if (index < printedMessages) continue;
      if (options.json) {
        print(JSON.stringify({ type: 'message', index, message }));
        continue;
      }
      if (message.role === 'assistant') {
        const iteration = messages.slice(0, index + 1).filter((each) => each.role === 'assistant').length;
        // The usage so far is known for the newest iteration only.
        const newest = !messages.slice(index + 1).some((each) => each.role === 'assistant');
        print(pc.dim(`── iteration ${iteration}${status && newest ? ` · ${formatTokens(status)} so far` : ''}`));
      }
      renderMessage(message, index, print);
    }
    const statusKey = status ? `${status.phase}/${status.iteration}` : '';
    if (options.json && status && statusKey !== lastStatusKey) print(JSON.stringify({ type: 'status', status }));
    lastStatusKey = statusKey || lastStatusKey;
    printedMessages = Math.max(printedMessages, messages.length);
    if (status && interactive) {
      if (status.phase === 'thinking') {
        thinkingSince ||= Date.now();
        const seconds = Math.round((Date.now() - thinkingSince) / 1000);
        clearTransient();
        out.write(pc.dim(`  … iteration ${status.iteration}: the model is thinking (${seconds}s) · ${formatTokens(status)}`));
        transient = true;
      } else {
        thinkingSince = 0;
      }
    }
  };

  for (;;) {
    const closed = await isClosed(handle);
    try {
      const [status, transcript] = await Promise.all([handle.query(statusQuery), handle.query(transcriptQuery)]);
      printNew(transcript.messages, closed ? null : status);
    } catch {
      // A closed run whose worker is gone cannot answer queries: its result still can.
    }
    if (closed) break;
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
  }
  clearTransient();
  return (await handle.result()) as DebugReport;
}

async function isClosed(handle: WorkflowHandle): Promise<boolean> {
  const description = await handle.describe();
  return description.status.name !== 'RUNNING';
}

function renderMessage(message: Message, index: number, print: (line: string) => void): void {
  if (message.role === 'assistant') {
    for (const block of message.content) {
      if (block.type === 'text' && block.text.trim()) print(`${pc.cyan('thought')} ${block.text.trim()}`);
      if (block.type === 'tool_use') print(`${pc.yellow('  → ')}${describeToolCall(block.name, block.input)}`);
    }
    return;
  }
  if (index === 0) {
    const first = message.content.find((block) => block.type === 'text');
    if (first?.type === 'text') print(pc.dim(first.text.split('\n').slice(0, 2).join(' · ')));
    return;
  }
  for (const block of message.content) {
    if (block.type === 'tool_result') {
      const firstLine = block.content.split('\n').find((line) => line.trim()) ?? '';
      const text = firstLine.length > 140 ? `${firstLine.slice(0, 139)}…` : firstLine;
      print(block.is_error ? `${pc.red('  ← ')}${text}` : `${pc.green('  ← ')}${text}`);
    } else if (block.type === 'text') {
      print(pc.magenta(`  ✉ ${block.text.split('\n')[0]}`));
    }
  }
}

function formatTokens(status: RunStatusView): string {
  const tokens = status.tokens.inputTokens + status.tokens.outputTokens + status.tokens.cacheReadTokens + status.tokens.cacheWriteTokens;
  const cost = status.costUsd === null ? 'cost unknown' : `$${status.costUsd.toFixed(4)}${status.costNote ? ' (at a conservative price)' : ''}`;
  return `${tokens} tokens · ${cost}`;
}
