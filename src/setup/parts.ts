// What `setup` and `doctor` share: a part's check result, who we run as, and how to say what to run.
import { userInfo } from 'node:os';
import { projectRoot } from '../locations.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of `doctor`: what was checked, what was found, and the command that fixes it. */
export interface CheckResult {
  name: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

export const setupCommand = 'durable-debugger setup';

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** The user's name, for the commands we tell them to run. */
export function userName(): string {
  if (process.env.SUDO_USER || process.env.USER) return (process.env.SUDO_USER || process.env.USER) as string;
  try {
    return userInfo().username;
  } catch {
    // A uid without an account (a container's user): let the shell say who it is.
    return '"$(id -un)"';
  }
}

/** The exact command that runs this tool's `setup` as root (PATH under sudo may not find it). */
export function setupAsRootCommand(): string {
  const script = process.argv[1] ?? 'durable-debugger';
  // The checkout runs TypeScript through tsx (found from its folder); the installed tool is plain JavaScript.
  if (script.endsWith('.ts')) return `cd ${quote(projectRoot)} && sudo npm run setup`;
  return `sudo ${quote(process.execPath)} ${quote(script)} setup`;
}

export function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
