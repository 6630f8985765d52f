import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  attemptOpening,
  attemptsReport,
  attemptSummaryLine,
  childInput,
  chooseAttempt,
  diffLines,
  keptAttempt,
  resumePlan,
  splitBudgets,
  summaryFromReport,
  withApprovalAnswer,
  type EarlierAttempt,
} from '../../src/agent/parallelAttempts.js';
import { parseDebugInput } from '../../src/agent/input.js';
import type { AttemptSummary, DebugReport } from '../../src/agent/report.js';

const usage = (n: number) => ({ inputTokens: n, outputTokens: n * 2, cacheReadTokens: n * 3, cacheWriteTokens: n * 4 });

function summary(attempt: number, overrides: Partial<AttemptSummary> = {}): AttemptSummary {
  return {
    attempt,
    workflowId: `parent-attempt-${attempt}`,
    status: 'fixed',
    detail: '',
    rootCause: null,
    diffLines: 2,
    iterations: 5,
    tokens: usage(attempt),
    costUsd: 0.01 * attempt,
    patch: '',
    ...overrides,
  };
}

function report(attempt: number, overrides: Partial<DebugReport> = {}): DebugReport {
  return {
    workflowId: `parent-attempt-${attempt}`,
    repository: '/repo',
    status: 'fixed',
    stopCondition: 'finish_verified',
    stopDetail: 'finish was called and the fix was verified',
    model: 'claude-sonnet-4-6',
    answeredBy: 'scripted',
    rootCause: `cause ${attempt}`,
    fixSummary: null,
    patch: '',
    fullPatch: null,
    testsBefore: null,
    testsAfter: null,
    testCommand: 'pytest',
    iterations: 4 + attempt,
    tokens: usage(attempt * 10),
    costUsd: 0.1 * attempt,
    durationMs: 1000,
    toolCalls: [],
    earlierToolCalls: 0,
    workflowRuns: 1,
    compactions: attempt === 2 ? 1 : 0,
    resumedFrom: null,
    problems: [],
    costNote: null,
    ...overrides,
  };
}

const patchOf = (removed: number, added: number) =>
  [
    'diff --git a/x.py b/x.py',
    '--- a/x.py',
    '+++ b/x.py',
    `@@ -1,${removed + 1} +1,${added + 1} @@`,
    ' context',
    ...Array.from({ length: removed }, (_, index) => `-old ${index}`),
    ...Array.from({ length: added }, (_, index) => `+new ${index}`),
    '',
  ].join('\n');

test('the budget is shared: the shares sum to the parent’s budgets', () => {
  const shares = splitBudgets({ maxIterations: 31, maxTokens: 100_001, maxCostUsd: 1.5, maxMinutes: 30 }, 3);
  assert.deepEqual(
    shares.map((share) => share.maxIterations),
    [11, 10, 10],
  );
  assert.equal(
    shares.reduce((sum, share) => sum + (share.maxTokens ?? 0), 0),
    100_001,
  );
  assert.ok(Math.abs(shares.reduce((sum, share) => sum + (share.maxCostUsd ?? 0), 0) - 1.5) < 1e-9);
  assert.ok(Math.abs(shares.reduce((sum, share) => sum + (share.maxMinutes ?? 0), 0) - 30) < 1e-9);
  // Budgets the parent does not have are not invented for the children.
  assert.deepEqual(splitBudgets({ maxIterations: 30 }, 2), [{ maxIterations: 15 }, { maxIterations: 15 }]);
});

test('each attempt opens differently, and the same way every time', () => {
  const openings = [1, 2, 3].map((number) => attemptOpening(number, 3, { thinking: false }));
  assert.deepEqual(
    openings.map((opening) => opening.temperature),
    [0.2, 0.6, 1],
  );
  assert.equal(new Set(openings.map((opening) => opening.instruction)).size, 3);
  assert.match(openings[0]?.instruction ?? '', /^Attempt 1 of 3: .*most likely\.$/);
  assert.match(openings[2]?.instruction ?? '', /pursue the third most likely one/);
  // An attempt's opening never names another attempt (scripts and the model can tell them apart).
  assert.doesNotMatch(openings[1]?.instruction ?? '', /Attempt [13] of/);
  assert.deepEqual(attemptOpening(2, 3, { thinking: false }), openings[1]);
  // With extended thinking, no temperature (the API accepts only one of them); the user's is the first attempt's.
  assert.equal(attemptOpening(2, 3, { thinking: true }).temperature, undefined);
  assert.equal(attemptOpening(1, 2, { temperature: 0.5, thinking: false }).temperature, 0.5);
  assert.equal(attemptOpening(2, 2, { temperature: 0.5, thinking: false }).temperature, 1);
});

test('a child’s input: one attempt, its budget share and opening, valid as a workflow input', () => {
  const parent = parseDebugInput({
    repo: '/repo',
    attempts: 3,
    firstWins: true,
    temperature: 0.3,
    budgets: { maxIterations: 30 },
  });
  const opening = attemptOpening(2, 3, { temperature: parent.temperature, thinking: false });
  const child = childInput(parent, opening, { maxIterations: 10 });
  assert.deepEqual(parseDebugInput(child), child);
  assert.equal(child.attempts, 1);
  assert.equal(child.firstWins, false);
  assert.equal(child.temperature, opening.temperature);
  assert.deepEqual(child.budgets, { maxIterations: 10 });
  assert.equal(child.attempt?.instruction, opening.instruction);
  assert.equal(child.resumeFrom, undefined);
  // With approve, the parent asks about the fix it keeps: its attempts never wait for a person.
  const approving = parseDebugInput({ repo: '/repo', attempts: 3, approve: true, approvalTimeoutMinutes: 5 });
  const attempt = childInput(approving, opening, { maxIterations: 10 });
  assert.equal(attempt.approve, false);
  assert.equal(attempt.approvalTimeoutMinutes, undefined);
  assert.deepEqual(parseDebugInput(attempt), attempt);
});

test('approval of the kept fix: an attempt revised after a review is kept if verified; the answer shapes the report', () => {
  const attempts = [summary(1, { diffLines: 2 }), summary(2, { diffLines: 9 }), summary(3, { status: 'not_fixed' })];
  assert.equal(keptAttempt(attempts, null), 1);
  assert.equal(keptAttempt(attempts, 2), 2);
  assert.equal(keptAttempt(attempts, 3), 1, 'a revision that is not verified falls back to the usual choice');
  const reports = new Map([
    [1, report(1)],
    [2, report(2)],
  ]);
  const kept = attemptsReport({ workflowId: 'p', repository: '/repo', durationMs: 1, attempts, reports, preferred: 2 });
  assert.equal(kept.chosenAttempt, 2);
  assert.equal(kept.rootCause, 'cause 2');
  assert.equal(withApprovalAnswer(kept, { decision: 'approved' }).status, 'fixed');
  assert.match(withApprovalAnswer(kept, { decision: 'approved' }).stopDetail, /approved$/);
  const late = withApprovalAnswer(kept, { decision: 'timed_out', minutes: 5 });
  assert.deepEqual([late.status, late.stopCondition, late.patch], ['not_approved', 'not_approved', kept.patch]);
  assert.match(late.stopDetail, /attempt 2 was not approved within 5 minutes/);
  assert.deepEqual(
    [
      withApprovalAnswer(kept, { decision: 'stopped', reason: 'enough' }).status,
      withApprovalAnswer(kept, { decision: 'stopped', reason: 'enough' }).stopDetail,
    ],
    ['stopped', 'enough'],
  );
});

test('a resumed parent’s child: resumes its own earlier attempt, never the parent, and says so in the Web UI', () => {
  const parent = parseDebugInput({ repo: '/repo', attempts: 3, resumeFrom: 'p', budgets: { maxIterations: 30 } });
  const opening = attemptOpening(2, 3, { thinking: false });
  // A child that starts afresh does not inherit the parent's resumeFrom (the earlier parent).
  assert.equal(childInput(parent, opening, { maxIterations: 10 }).resumeFrom, undefined);
  const resumed = childInput(parent, opening, { maxIterations: 10 }, 'p-attempt-2');
  assert.equal(resumed.resumeFrom, 'p-attempt-2');
  assert.deepEqual(parseDebugInput(resumed), resumed);
  assert.equal(attemptSummaryLine(opening), 'Attempt 2 of 3 · the second most likely hypothesis · temperature 0.6');
  assert.equal(
    attemptSummaryLine(opening, 'p-attempt-2'),
    'Attempt 2 of 3 · the second most likely hypothesis · temperature 0.6 · resumed from p-attempt-2',
  );
});

test('resuming a parent: finished attempts are kept, unfinished ones resumed, unstarted ones started; first-wins already won cancels the rest', () => {
  const earlier: EarlierAttempt[] = [
    { attempt: 1, workflowId: 'p-attempt-1', found: 'finished', report: report(1, { status: 'not_fixed' }) },
    { attempt: 2, workflowId: 'p-attempt-2', found: 'unfinished' },
    { attempt: 3, workflowId: 'p-attempt-3', found: 'not_started' },
  ];
  assert.deepEqual(resumePlan(earlier, false), [
    { attempt: 1, do: 'adopt', report: report(1, { status: 'not_fixed' }) },
    { attempt: 2, do: 'resume', from: 'p-attempt-2' },
    { attempt: 3, do: 'start' },
  ]);
  // First-wins without a fix yet: the same.
  assert.deepEqual(
    resumePlan(earlier, true).map((plan) => plan.do),
    ['adopt', 'resume', 'start'],
  );
  const won: EarlierAttempt[] = [
    { attempt: 1, workflowId: 'p-attempt-1', found: 'finished', report: report(1) },
    ...earlier.slice(1),
  ];
  assert.deepEqual(
    resumePlan(won, true).map((plan) => plan.do),
    ['adopt', 'cancelled', 'cancelled'],
  );
  assert.deepEqual(
    resumePlan(won, false).map((plan) => plan.do),
    ['adopt', 'resume', 'start'],
  );
});

test('a resumed parent’s report names the parent it resumed', () => {
  const reports = new Map([[1, report(1)]]);
  const attempts = [summaryFromReport(1, report(1)), summary(2, { status: 'not_fixed' })];
  assert.equal(
    attemptsReport({
      workflowId: 'p-resumed-2',
      repository: '/repo',
      durationMs: 1,
      attempts,
      reports,
      resumedFrom: 'p',
    }).resumedFrom,
    'p',
  );
  assert.equal(
    attemptsReport({ workflowId: 'p', repository: '/repo', durationMs: 1, attempts, reports }).resumedFrom,
    null,
  );
});

test('lines changed by a patch: additions plus removals, headers not counted', () => {
  assert.equal(diffLines(''), 0);
  assert.equal(diffLines(patchOf(1, 1)), 2);
  assert.equal(diffLines(patchOf(3, 7)), 10);
  // A removed line that itself starts with "--" is still one changed line.
  assert.equal(diffLines('diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n--- a comment\n+++ a comment\n'), 2);
  assert.equal(diffLines(patchOf(1, 1) + patchOf(0, 2)), 4);
});

test('an attempt whose patch is kept in the content store is ranked by its whole patch, not by its preview', () => {
  // The report of a large fix holds the beginning of its patch (2 changed lines of 5,000).
  const large = report(1, {
    patch: patchOf(1, 1),
    fullPatch: { blob: 'a'.repeat(64), bytes: 400_000, file: '/store/blob', changedLines: 5_000 },
  });
  const small = report(2, { patch: patchOf(3, 3) });
  const summaries = [summaryFromReport(1, large), summaryFromReport(2, small)];
  assert.deepEqual(
    summaries.map((attempt) => attempt.diffLines),
    [5_000, 6],
  );
  assert.equal(chooseAttempt(summaries), 2);
});

test('lines changed by binary and legacy-encoded files: one per binary file, the decoded lines of legacy text', () => {
  const binary =
    'diff --git a/logo.png b/logo.png\nindex 1..2 100644\nGIT binary patch\nliteral 3\nAbc\n\nliteral 3\nAbc\n\n';
  const legacy = `# tarifs.py: latin-1 (declared) text\n# @@ -1 +1 @@\n# -TAUX = 0.55\n# +TAUX = 0.055\n${binary.replaceAll('logo.png', 'tarifs.py')}`;
  assert.equal(diffLines(binary), 1);
  assert.equal(diffLines(legacy), 2);
  assert.equal(diffLines(patchOf(1, 1) + legacy + binary), 5);
});

test('choosing: a verified fix, the smallest diff, then the fewest iterations, then the earliest', () => {
  assert.equal(
    chooseAttempt([
      summary(1, { status: 'not_fixed', diffLines: 0 }),
      summary(2, { diffLines: 9 }),
      summary(3, { diffLines: 2 }),
    ]),
    3,
  );
  assert.equal(
    chooseAttempt([summary(1, { diffLines: 2, iterations: 8 }), summary(2, { diffLines: 2, iterations: 6 })]),
    2,
  );
  assert.equal(chooseAttempt([summary(1), summary(2)]), 1);
  assert.equal(
    chooseAttempt([summary(1, { status: 'cancelled', diffLines: 0 }), summary(2, { status: 'budget_exhausted' })]),
    null,
  );
});

test('the parent’s report: the chosen fix, every attempt, totals summed over them', () => {
  const reports = new Map([
    [1, report(1, { status: 'not_fixed', stopCondition: 'no_tool_calls', rootCause: null })],
    [2, report(2, { patch: patchOf(4, 6) })],
    [3, report(3, { patch: patchOf(1, 1), fixSummary: 'one line' })],
  ]);
  const attempts = [...reports].map(([attempt, each]) => summaryFromReport(attempt, each));
  attempts.push(summary(4, { status: 'cancelled', diffLines: 0, iterations: 2, tokens: usage(7), costUsd: 0.05 }));
  const parent = attemptsReport({ workflowId: 'parent', repository: '/repo', durationMs: 5000, attempts, reports });
  assert.equal(parent.status, 'fixed');
  assert.equal(parent.chosenAttempt, 3);
  assert.equal(parent.rootCause, 'cause 3');
  assert.equal(parent.fixSummary, 'one line');
  assert.equal(parent.patch, patchOf(1, 1));
  assert.match(parent.stopDetail, /attempt 3 of 4.*2 changed lines/);
  assert.equal(parent.iterations, 5 + 6 + 7 + 2);
  assert.deepEqual(parent.tokens, usage(10 + 20 + 30 + 7));
  assert.ok(Math.abs((parent.costUsd ?? 0) - (0.1 + 0.2 + 0.3 + 0.05)) < 1e-9);
  assert.equal(parent.compactions, 1);
  assert.deepEqual(
    parent.attempts?.map((attempt) => [attempt.attempt, attempt.status, attempt.diffLines]),
    [
      [1, 'not_fixed', 0],
      [2, 'fixed', 10],
      [3, 'fixed', 2],
      [4, 'cancelled', 0],
    ],
  );
});

test('the parent’s report when no attempt fixed the bug, and when a cost is unknown', () => {
  const reports = new Map([
    [1, report(1, { status: 'budget_exhausted', stopCondition: 'max_iterations', stopDetail: 'reached the limit' })],
    [2, report(2, { status: 'not_fixed', stopCondition: 'guardrail', costUsd: null })],
  ]);
  const attempts = [...reports].map(([attempt, each]) => summaryFromReport(attempt, each));
  const parent = attemptsReport({ workflowId: 'parent', repository: '/repo', durationMs: 1, attempts, reports });
  assert.equal(parent.status, 'budget_exhausted');
  assert.equal(parent.stopCondition, 'max_iterations');
  assert.equal(parent.chosenAttempt, null);
  assert.equal(parent.patch, '');
  assert.equal(parent.costUsd, null);
  assert.match(parent.stopDetail, /no attempt of 2 was fixed \(1: budget_exhausted, 2: not_fixed\)/);
  const stopped = attemptsReport({
    workflowId: 'parent',
    repository: '/repo',
    durationMs: 1,
    attempts: [summary(1, { status: 'stopped' }), summary(2, { status: 'cancelled' })],
    reports: new Map(),
  });
  assert.equal(stopped.status, 'stopped');
  assert.equal(stopped.stopCondition, 'stop_signal');
});

test('inputs that do not go together are refused, naming the field', () => {
  const refused: Array<[unknown, RegExp]> = [
    [{ repo: '/r', firstWins: true }, /firstWins: needs attempts above 1/],
    [
      { repo: '/r', attempts: 3, budgets: { maxIterations: 2 } },
      /attempts: 3 attempts need at least as many iterations/,
    ],
    [{ repo: '/r', approvalTimeoutMinutes: 5 }, /approvalTimeoutMinutes: needs approve true/],
    [{ repo: '/r', attempts: 11 }, /attempts: /],
    [{ repo: '/r', attempts: 1.5 }, /attempts: /],
  ];
  for (const [input, expected] of refused) assert.throws(() => parseDebugInput(input), expected, JSON.stringify(input));
  assert.equal(parseDebugInput({ repo: '/r' }).attempts, 1);
  assert.equal(parseDebugInput({ repo: '/r', approve: true, approvalTimeoutMinutes: 0.5 }).approvalTimeoutMinutes, 0.5);
  // The parent of attempts asks for approval of the fix it keeps.
  assert.equal(parseDebugInput({ repo: '/r', attempts: 2, approve: true, approvalTimeoutMinutes: 5 }).approve, true);
  // A parent of attempts resumes an interrupted parent (each attempt from its own saved state).
  assert.equal(parseDebugInput({ repo: '/r', attempts: 2, resumeFrom: 'x' }).resumeFrom, 'x');
});
