// The version of the user's checkout, as version plugins that read git (hatch-vcs, setuptools-scm,
// pdm's scm source, poetry-dynamic-versioning) would compute it: read on the host at snapshot time,
// since the sandbox and the environment build get the files without .git. Given to the build as
// SETUPTOOLS_SCM_PRETEND_VERSION and the like (pythonPlan.ts).
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { gitOutput } from './safeGit.js';

/** The version when there is no git, no commit or no tag that reads as a version. */
export const fallbackProjectVersion = '0.0.0';

/** PEP 440 characters only: the version goes into a shell script and a package's metadata. */
const versionText = /^[0-9][0-9A-Za-z.+!_-]{0,100}$/;

/**
 * `git describe --tags --long` over the repository, turned into a PEP 440 version; the fallback when the
 * folder is no checkout's root, or git is absent or says nothing. Run as every git command in the user's
 * repository is (safeGit.ts: its executable settings off), its output capped, a git that hangs stopped.
 */
export async function describeProjectVersion(root: string): Promise<string> {
  // As setuptools-scm by default: the checkout's own root, not a folder inside a larger one.
  if (!(await lstat(join(root, '.git')).catch(() => null))) return fallbackProjectVersion;
  const args = ['--no-optional-locks', 'describe', '--tags', '--long', '--abbrev=7', '--match', '*[0-9]*'];
  return gitOutput(root, args, { timeoutMs: 10_000, maxBuffer: 4096 }).then(
    versionFromDescribe,
    () => fallbackProjectVersion,
  );
}

/**
 * `v1.4.2-0-gabc1234` → 1.4.2; `v1.4.2-3-gabc1234` → 1.4.3.dev3+gabc1234 (setuptools-scm's default,
 * guess-next-dev); a tag that does not read as a version → the fallback.
 */
export function versionFromDescribe(output: string): string {
  const match = output.trim().match(/^(.*)-(\d+)-g([0-9a-f]+)$/);
  if (!match) return fallbackProjectVersion;
  const [, tag, distanceText, hash] = match as unknown as [string, string, string, string];
  // As setuptools-scm reads a tag: an optional prefix ending in '-', an optional v, then the version.
  const version = tag.match(/^(?:[\w-]+-)?[vV]?(\d+(?:\.\d+)*[^+\s]*)(?:\+.*)?$/)?.[1];
  if (!version || !versionText.test(version)) return fallbackProjectVersion;
  const distance = Number(distanceText);
  if (distance === 0) return version;
  const release = version.match(/^\d+(?:\.\d+)*$/);
  const next = release
    ? version.replace(/\d+$/, (last) => String(Number(last) + 1))
    : version.replace(/\.?dev\d*$/, '');
  const result = `${next}.dev${distance}+g${hash}`;
  return versionText.test(result) ? result : fallbackProjectVersion;
}

/** A version fit for the build's script: what describeProjectVersion gave, else the fallback. */
export function safeProjectVersion(value: string | undefined): string {
  return value !== undefined && versionText.test(value) ? value : fallbackProjectVersion;
}
