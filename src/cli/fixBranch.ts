// `apply`: puts a run's verified patch on a new branch of the user's git repository, as one commit,
// without touching the checkout: the commit is built in a temporary index (read-tree HEAD, apply
// --cached, write-tree, commit-tree) and the branch is created only if everything before worked.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DebugReport } from '../agent/report.js';
import { formatTestSummary, type TestSummary } from '../agent/testResults.js';
import { gitSucceeds, gitSync } from '../sandbox/workspace/safeGit.js';

export class FixBranchRefused extends Error {}

export interface FixBranch {
  branch: string;
  commit: string;
  files: string[];
}

export function fixBranchName(workflowId: string): string {
  return `durable-debugger/${workflowId}`;
}

/**
 * Why the fix of run `workflowId` cannot become a branch of `repo`, or null: not a git repository,
 * no commit to branch from, or its branch already there. `apply --repo` asks before connecting.
 */
export function applyRefusal(repo: string, workflowId: string): string | null {
  if (!gitSucceeds(repo, ['rev-parse', '--is-inside-work-tree']))
    return `"${repo}" is not a git repository: apply the patch by hand with \`durable-debugger result ${workflowId} --patch | git apply\`, or make it one with a first commit.`;
  if (!gitSucceeds(repo, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']))
    return `${repo} has no commit yet: commit its files first.`;
  const branch = fixBranchName(workflowId);
  if (gitSucceeds(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]))
    return `The branch ${branch} already exists in ${repo}; delete it first to create it again.`;
  return null;
}

/**
 * Creates `durable-debugger/<id>` in `repo` with the run's whole patch (`patch`: the report's,
 * or, when the report holds only its beginning, the one read back from the content store), or
 * refuses with nothing changed.
 */
export function createFixBranch(repo: string, report: DebugReport, patch: string): FixBranch {
  if (report.status !== 'fixed') {
    throw new FixBranchRefused(
      `Run ${report.workflowId} ended ${report.status}, not fixed: there is no verified patch to apply.`,
    );
  }
  if (!patch.trim()) throw new FixBranchRefused(`Run ${report.workflowId} has an empty patch.`);
  const refusal = applyRefusal(repo, report.workflowId);
  if (refusal) throw new FixBranchRefused(refusal);
  const git = gitIn(repo);
  const prefix = git(['rev-parse', '--show-prefix']).trim();
  const branch = fixBranchName(report.workflowId);
  git(['check-ref-format', '--branch', branch], { refusal: `"${branch}" is not a valid branch name.` });

  const scratch = mkdtempSync(join(tmpdir(), 'durable-debugger-apply-'));
  try {
    const patchFile = join(scratch, 'fix.patch');
    writeFileSync(patchFile, patch);
    return commitOnBranch(git, { repo, report, branch, prefix, patchFile, index: join(scratch, 'index') });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function commitOnBranch(
  git: Git,
  options: { repo: string; report: DebugReport; branch: string; prefix: string; patchFile: string; index: string },
): FixBranch {
  const { repo, report, branch, prefix, patchFile } = options;
  const files = touchedFiles(git, patchFile, report.workflowId);
  const dirty = git([
    'status',
    '--porcelain',
    '--untracked-files=all',
    '--ignore-submodules=all',
    '--',
    ...files,
  ]).trim();
  if (dirty) {
    throw new FixBranchRefused(
      `Files the patch touches have uncommitted changes; commit or stash them first:\n${dirty}`,
    );
  }

  const index = { GIT_INDEX_FILE: options.index };
  git(['read-tree', 'HEAD'], { env: index });
  git(['apply', '--cached', ...(prefix ? [`--directory=${prefix}`] : []), patchFile], {
    env: index,
    refusal: `The patch of ${report.workflowId} no longer applies to ${repo} at HEAD (the files changed since the run):`,
    withOutput: true,
  });
  const tree = git(['write-tree'], { env: index }).trim();
  const commit = git(['commit-tree', tree, '-p', 'HEAD', '-F', '-'], {
    env: identityFallback(repo),
    input: commitMessage(report),
  }).trim();
  // The empty old value makes this a create: a branch made meanwhile is never overwritten.
  git(['update-ref', `refs/heads/${branch}`, commit, ''], {
    refusal: `The branch ${branch} could not be created:`,
    withOutput: true,
  });
  return { branch, commit, files };
}

export function commitMessage(report: DebugReport): string {
  const rootCause = (report.rootCause ?? 'the bug behind the failing tests').trim();
  const subject = `Fix: ${firstLine(rootCause)}`;
  const lines = [subject.length > 72 ? `${subject.slice(0, 71)}…` : subject, '', `Root cause: ${rootCause}`];
  if (report.fixSummary) lines.push('', `Fix: ${report.fixSummary.trim()}`);
  lines.push('', `Tests before: ${oneLine(report.testsBefore)}`, `Tests after: ${oneLine(report.testsAfter)}`);
  if (report.testCommand) lines.push(`Test command: ${report.testCommand}`);
  lines.push('', `Made by durable-debugger, run ${report.workflowId} (verified by the workflow's own test run).`);
  return `${lines.join('\n')}\n`;
}

/** The files the patch touches, as git reads it (quoted names, binary patches). */
function touchedFiles(git: Git, patchFile: string, workflowId: string): string[] {
  const listed = git(['apply', '--numstat', '-z', patchFile], {
    refusal: `The patch of ${workflowId} is not one git can read:`,
    withOutput: true,
  });
  // Each entry: added, deleted (or "-" for a binary file), then the path, ended by NUL.
  return listed
    .split('\0')
    .filter(Boolean)
    .map((entry) => entry.split('\t').slice(2).join('\t'));
}

function firstLine(text: string): string {
  return text.split('\n')[0]?.trim().replace(/\.$/, '') ?? text;
}

function oneLine(summary: TestSummary | null): string {
  if (!summary) return 'not run';
  return (
    formatTestSummary(summary)
      .split('\n')[0]
      ?.replace(/^Tests: /, '') ?? ''
  );
}

/** The user's own identity when git has one; otherwise the commit is signed as durable-debugger. */
function identityFallback(repo: string): NodeJS.ProcessEnv {
  const configured = (key: string) => gitSucceeds(repo, ['config', key]);
  return {
    ...(configured('user.name') ? {} : { GIT_AUTHOR_NAME: 'durable-debugger', GIT_COMMITTER_NAME: 'durable-debugger' }),
    ...(configured('user.email')
      ? {}
      : { GIT_AUTHOR_EMAIL: 'durable-debugger@localhost', GIT_COMMITTER_EMAIL: 'durable-debugger@localhost' }),
  };
}

interface GitOptions {
  env?: NodeJS.ProcessEnv;
  input?: string;
  /** When set, a failure is the user's to fix: this message (plus git's words with withOutput). */
  refusal?: string;
  withOutput?: boolean;
}

type Git = ReturnType<typeof gitIn>;

function gitIn(repo: string) {
  return (args: string[], options: GitOptions = {}): string => {
    const result = gitSync(repo, args, { input: options.input, env: options.env });
    if (result.status === 0) return result.stdout;
    const said = `${result.stderr ?? ''}${result.error ? result.error.message : ''}`.trim();
    if (options.refusal)
      throw new FixBranchRefused(options.withOutput && said ? `${options.refusal}\n${said}` : options.refusal);
    throw new Error(`git ${args.join(' ')} failed: ${said}`);
  };
}
