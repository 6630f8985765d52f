// A patch computed for a workspace holds only while the workspace is exactly that one: the
// approval gate reuses its patch for the report on this rule (workflows/approval.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isWorkspaceAt, workspaceMark, type Mutation, type WorkspaceLog } from '../../src/agent/workspace.js';

const edit = (toolUseId: string): Mutation => ({
  path: 'buggy_code.py',
  after: { kind: 'file', blob: toolUseId, executable: false },
  toolUseId,
});

test('a workspace is at its mark until the log grows or the digest moves', () => {
  const log: WorkspaceLog = { snapshotId: 'snap', mutations: [edit('a')], digest: 'd1' };
  const mark = workspaceMark(log);
  assert.ok(isWorkspaceAt(log, mark));
  assert.ok(isWorkspaceAt({ ...log, mutations: [...log.mutations] }, mark), 'the same log, copied');

  log.mutations.push(edit('b'));
  assert.ok(!isWorkspaceAt(log, mark), 'a new mutation');
  // An edit and its undo bring the tree back, but the log that makes it is another.
  log.digest = 'd1';
  assert.ok(!isWorkspaceAt(log, mark));
  assert.ok(!isWorkspaceAt({ snapshotId: 'snap', mutations: [edit('a')], digest: 'd2' }, mark), 'another digest');
  assert.ok(!isWorkspaceAt({ snapshotId: 'other', mutations: [edit('a')], digest: 'd1' }, mark), 'another snapshot');
});
