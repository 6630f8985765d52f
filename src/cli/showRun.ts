// Shows a run as it goes, from the looks a source takes at it (src/cli/follow.ts polls the run's
// queries; a `run` served by the background worker gets them from it: src/cli/backgroundRun.ts):
// each new thought, tool call and result, and while the model writes, what it has written so far.
// No Temporal here: the command that only prints what its background worker follows loads none.
import pc from 'picocolors';
import type { Message } from '../agent/conversation.js';
import type { DebugReport } from '../agent/report.js';
import type { RunStatusView } from '../agent/runState.js';
import { describeToolCall } from '../agent/tools.js';
import type { TranscriptView } from '../temporal/definitions.js';
import { describeEnvironment } from '../agent/environment.js';
import type { WritingSoFar } from '../agent/replySoFar.js';
import { printableAll } from './terminalText.js';

/** One look at a run: whether it has closed, its status and transcript (null: nobody answered), what the model is writing. */
export interface RunLook {
  closed: boolean;
  answer: [RunStatusView, TranscriptView] | null;
  writing: WritingSoFar | null;
}

/** A run to show: its looks, the last one taken once it has closed, then its report. */
export interface RunSource {
  workflowId: string;
  looks: AsyncIterable<RunLook>;
  /** The run's report, asked once its looks have ended. */
  report(): Promise<DebugReport>;
}

export interface ShowOptions {
  json: boolean;
  out?: NodeJS.WritableStream;
}

export async function showRun(source: RunSource, options: ShowOptions): Promise<DebugReport> {
  const out = options.out ?? process.stdout;
  const interactive = !options.json && Boolean((out as NodeJS.WriteStream).isTTY);
  let printedMessages = 0;
  let transient = false;
  let thinkingSince = 0;
  let lastStatusKey = '';
  let shownApproval = 0;
  const shownAttempts = new Map<number, string>();
  const attemptLabels = new Map<number, string>();
  let environmentShown = false;
  let lastWaitingFor: string | null = null;
  const clearTransient = () => {
    if (transient) out.write('\r\x1b[2K');
    transient = false;
  };
  const print = (line: string) => {
    clearTransient();
    out.write(`${line}\n`);
  };

  // `closed`: the status is the run's last; what only a live run shows (the thinking line, what it
  // waits for, how to answer its approval) would say something no longer true.
  let lastWriting = '';
  const printNew = (
    { messages, replyIterations }: TranscriptView,
    status: RunStatusView | null,
    closed: boolean,
    writing: WritingSoFar | null,
  ) => {
    if (!options.json && !environmentShown && status?.environment !== undefined && status.phase !== 'preparing') {
      environmentShown = true;
      print(pc.dim(describeEnvironment(status.environment)));
    }
    for (const [index, message] of messages.entries()) {
      if (index < printedMessages) continue;
      if (options.json) {
        print(JSON.stringify({ type: 'message', index, message }));
        continue;
      }
      if (message.role === 'assistant') {
        const iteration = iterationOfReply(messages, index, replyIterations);
        // The usage so far is known for the newest iteration only.
        const newest = !messages.slice(index + 1).some((each) => each.role === 'assistant');
        print(pc.dim(`── iteration ${iteration}${status && newest ? ` · ${formatTokens(status)} so far` : ''}`));
      }
      renderMessage(printableAll(message), index, print);
    }
    if (status?.waitingFor && status.waitingFor !== lastWaitingFor && !options.json && !closed)
      print(pc.yellow(status.waitingFor));
    lastWaitingFor = status?.waitingFor ?? null;
    const statusKey = status ? `${status.phase}/${status.iteration}${status.waitingFor ? '/waiting' : ''}` : '';
    if (options.json && status && statusKey !== lastStatusKey) print(JSON.stringify({ type: 'status', status }));
    lastStatusKey = statusKey || lastStatusKey;
    printedMessages = Math.max(printedMessages, messages.length);
    if (!options.json && status) {
      // A verified fix waiting for a person: show the patch and how to answer, once per wait.
      if (status.awaitingApproval && status.awaitingApproval.since !== shownApproval && !closed) {
        shownApproval = status.awaitingApproval.since;
        print(awaitingApprovalText(source.workflowId, status.awaitingApproval.patch));
      }
      // The parent of parallel attempts: a line whenever an attempt starts or ends.
      for (const attempt of status.attempts ?? []) {
        if (shownAttempts.get(attempt.attempt) === attempt.status) continue;
        shownAttempts.set(attempt.attempt, attempt.status);
        attemptLabels.set(attempt.attempt, attempt.label);
        print(`${pc.blue('›')} ${attempt.label}: ${attempt.status} (${attempt.workflowId})`);
      }
    }
    const writingNow = status?.phase === 'thinking' && !closed ? writing : null;
    if (options.json && writingNow && `${writingNow.chars}/${writingNow.tail}` !== lastWriting) {
      lastWriting = `${writingNow.chars}/${writingNow.tail}`;
      print(JSON.stringify({ type: 'writing', iteration: status?.iteration, ...writingNow }));
    }
    if (status && interactive && !closed) {
      if (status.phase === 'thinking') {
        thinkingSince ||= Date.now();
        const seconds = Math.round((Date.now() - thinkingSince) / 1000);
        const line = writingNow
          ? `  … iteration ${status.iteration}: ${writingNow.thinking ? 'thinking' : 'writing'} (${seconds}s) · ${oneLine(writingNow.tail)}`
          : `  … iteration ${status.iteration}: the model is thinking (${seconds}s) · ${formatTokens(status)}`;
        clearTransient();
        out.write(pc.dim(fitted(line, (out as NodeJS.WriteStream).columns)));
        transient = true;
      } else {
        thinkingSince = 0;
      }
    }
  };

  // What the repository and the model wrote is made printable before our colours are added
  // (JSON escapes it itself); each message once, when it is printed (see printNew).
  const shown = <T>(value: T): T => (options.json ? value : printableAll(value));
  for await (const { closed, answer, writing } of source.looks) {
    if (answer) printNew(answer[1], shown(answer[0]), closed, shown(writing));
  }
  clearTransient();
  const report = await source.report();
  // A closed parent whose worker is gone answered no status: its attempts come from the report.
  for (const attempt of options.json ? [] : printableAll(report.attempts ?? [])) {
    if (shownAttempts.get(attempt.attempt) === attempt.status) continue;
    const label = attemptLabels.get(attempt.attempt) ?? `attempt ${attempt.attempt} of ${report.attempts?.length}`;
    print(`${pc.blue('›')} ${label}: ${attempt.status} (${attempt.workflowId})`);
  }
  return report;
}

/** The end of a text on one line: where the writing is now. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A transient line cut to the terminal's width from the left of what it writes (a wrapped line could not be cleared). */
function fitted(line: string, columns: number | undefined): string {
  const width = (columns ?? 80) - 1;
  if (line.length <= width) return line;
  const head = line.indexOf(' · ') + 3;
  const room = width - head - 1;
  return room > 10 ? `${line.slice(0, head)}…${line.slice(line.length - room)}` : line.slice(0, width);
}

/**
 * The iteration of the assistant message at `index`, as the workflow counts it (a retried model
 * call or a paused turn makes that differ from the number of replies); counted from the replies
 * only for runs whose workflow does not say.
 */
export function iterationOfReply(
  messages: Message[],
  index: number,
  replyIterations: number[] | null | undefined,
): number {
  const reply = messages.slice(0, index + 1).filter((each) => each.role === 'assistant').length;
  return replyIterations?.[reply - 1] ?? reply;
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
  const tokens =
    status.tokens.inputTokens +
    status.tokens.outputTokens +
    status.tokens.cacheReadTokens +
    status.tokens.cacheWriteTokens;
  const cost =
    status.costUsd === null
      ? 'cost unknown'
      : `$${status.costUsd.toFixed(4)}${status.costNote ? ' (at a conservative price)' : ''}`;
  return `${tokens} tokens · ${cost}`;
}

/** What a person sees while a verified fix awaits approval. */
export function awaitingApprovalText(workflowId: string, patch: string): string {
  return [
    pc.bold('Awaiting approval:') + ' the tests pass with this patch; the run waits for your answer.',
    patch.trimEnd() || '(no changes)',
    `Approve: durable-debugger approve ${workflowId}`,
    `Reject:  durable-debugger reject ${workflowId} "what to change"`,
  ].join('\n');
}
