// The workspace as the workflow knows it: a repository snapshot plus an ordered log of
// mutations. The files on disk are a pure function of these, so any sandbox on any worker
// can rebuild them, and `temporal workflow reset` to an earlier step is safe.

/** The state of one path after a mutation; null when the path was removed. */
export type PathState = { kind: 'file'; blob: string; executable: boolean } | { kind: 'symlink'; target: string } | null;

export interface Mutation {
  path: string;
  after: PathState;
  /** The tool call that caused it. */
  toolUseId: string;
}

export interface WorkspaceLog {
  snapshotId: string;
  mutations: Mutation[];
  /** Digest of the tree after the last mutation: what the sandbox's workspace must match. */
  digest: string;
}
