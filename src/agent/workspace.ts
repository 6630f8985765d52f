// The workspace as the workflow knows it: a repository snapshot plus an ordered log of
// mutations. The files on disk are a pure function of these, so any sandbox on any worker
// can rebuild them, and `temporal workflow reset` to an earlier step is safe.

/** The state of one path after a mutation; null when the path was removed. */
export type PathState =
  { kind: 'file'; blob: string; executable: boolean } | { kind: 'symlink'; target: string } | null;

export interface Mutation {
  path: string;
  after: PathState;
  /** The tool call that caused it. */
  toolUseId: string;
  /**
   * What kind of call made it: a file tool (edit_file, write_file), a command (run_command) or a
   * test run (run_tests). The patch leaves out what only commands and test runs left behind;
   * absent in logs recorded before this was kept, and then counted as a file tool's. `verification`:
   * the fresh sandbox of a verification undid such a change, so that the suite ran on the patch.
   */
  madeBy?: 'file_tool' | 'command' | 'test_run' | 'verification';
}

export interface WorkspaceLog {
  snapshotId: string;
  mutations: Mutation[];
  /** Digest of the tree after the last mutation: what the sandbox's workspace must match. */
  digest: string;
}

/**
 * What names one state of a workspace within a workflow run: the snapshot, how long the log is
 * (it only grows) and the digest after it. A patch computed for a mark holds while the mark does.
 */
export interface WorkspaceMark {
  snapshotId: string;
  mutationCount: number;
  digest: string;
}

export function workspaceMark(log: WorkspaceLog): WorkspaceMark {
  return { snapshotId: log.snapshotId, mutationCount: log.mutations.length, digest: log.digest };
}

export function isWorkspaceAt(log: WorkspaceLog, mark: WorkspaceMark): boolean {
  return (
    log.snapshotId === mark.snapshotId && log.mutations.length === mark.mutationCount && log.digest === mark.digest
  );
}
