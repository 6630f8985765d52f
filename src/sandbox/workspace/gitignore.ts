// The .gitignore files of a workspace (the root's and nested ones), read with the `ignore`
// library: build artefacts they name (`__pycache__`, `.coverage`, `*.egg-info`, `dist/`) never
// enter the workspace's tree, so never the mutation log, the history or the patch. As in git,
// a deeper .gitignore overrides a shallower one, and nothing below an ignored folder counts.
import { lstat, readFile } from 'node:fs/promises';
import { posix } from 'node:path';
import ignore, { type Ignore } from 'ignore';

export const gitignoreName = '.gitignore';

/** Larger .gitignore files are not read (a command could make a huge one). */
const maxGitignoreBytes = 1024 * 1024;

export class GitignoreRules {
  private readonly rulesByFolder = new Map<string, Promise<Ignore | null>>();
  private readonly ignoredFolders = new Map<string, Promise<boolean>>();

  /** `root` is an absolute folder; every path given later is relative to it, with `/`. */
  constructor(private readonly root: string) {}

  /** Whether `path` (a file, or a folder when `isFolder`) is ignored, itself or through a parent folder. */
  async ignores(path: string, isFolder: boolean): Promise<boolean> {
    const parts = path.split('/');
    for (let depth = 1; depth < parts.length; depth++) {
      if (await this.folderIgnored(parts.slice(0, depth).join('/'))) return true;
    }
    return isFolder ? this.folderIgnored(path) : this.matches(parts, false);
  }

  private folderIgnored(folder: string): Promise<boolean> {
    let answer = this.ignoredFolders.get(folder);
    if (!answer) {
      answer = this.matches(folder.split('/'), true);
      this.ignoredFolders.set(folder, answer);
    }
    return answer;
  }

  /** The rules of every .gitignore from the root down to the path's folder; the deepest that decides wins. */
  private async matches(parts: string[], isFolder: boolean): Promise<boolean> {
    let ignored = false;
    for (let depth = 0; depth < parts.length; depth++) {
      const rules = await this.rulesOf(parts.slice(0, depth).join('/'));
      if (!rules) continue;
      const result = rules.test(parts.slice(depth).join('/') + (isFolder ? '/' : ''));
      if (result.ignored) ignored = true;
      else if (result.unignored) ignored = false;
    }
    return ignored;
  }

  private rulesOf(folder: string): Promise<Ignore | null> {
    let rules = this.rulesByFolder.get(folder);
    if (!rules) {
      rules = readRules(posix.join(this.root, folder, gitignoreName));
      this.rulesByFolder.set(folder, rules);
    }
    return rules;
  }
}

/** Only a regular file is read: a FIFO or a symlink named .gitignore (made by a command) is no rule file. */
async function readRules(path: string): Promise<Ignore | null> {
  const stats = await lstat(path).catch(() => null);
  if (!stats?.isFile() || stats.size > maxGitignoreBytes) return null;
  const text = await readFile(path, 'utf8').catch(() => null);
  return text === null ? null : ignore().add(text);
}
