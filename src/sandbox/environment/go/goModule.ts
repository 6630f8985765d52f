// What go.mod and go.work say that the environment needs: the module's path, the Go it asks for
// (the `go` directive and the `toolchain` line), its requirements and replacements, the workspace's
// modules. Pure, and forgiving: a file Go itself would refuse is the agent's to fix, not the plan's.

export interface GoModFile {
  /** `module` line: the module's path. */
  module: string | null;
  /** The `go` directive: the language version, a minimum Go since 1.21 ("1.22", "1.22.5"). */
  go: string | null;
  /** The `toolchain` line without its `go` prefix ("1.22.5"), or null. */
  toolchain: string | null;
  /** Required module paths (direct and indirect). */
  requires: string[];
  /** `replace old [v] => new [v]`: the target is a folder (./x, ../x, /x) or a module of a registry. */
  replaces: Array<{ from: string; to: string; toVersion: string | null }>;
  /** go.work only: the folders of its `use` lines. */
  uses: string[];
}

/** Reads go.mod or go.work: its directives, single-line and in ( ) blocks, comments dropped. */
export function parseGoModFile(text: string): GoModFile {
  const parsed: GoModFile = { module: null, go: null, toolchain: null, requires: [], replaces: [], uses: [] };
  let block: string | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (!line) continue;
    if (block !== null) {
      if (line === ')') block = null;
      else directive(parsed, block, line);
      continue;
    }
    const opened = line.match(/^(\w+)\s*\($/);
    if (opened) {
      block = opened[1] as string;
      continue;
    }
    const word = line.match(/^(\w+)\s+(.*)$/);
    if (word) directive(parsed, word[1] as string, (word[2] as string).trim());
  }
  return parsed;
}

function directive(parsed: GoModFile, verb: string, rest: string): void {
  const fields = rest.split(/\s+/).map(unquote);
  if (verb === 'module') parsed.module = fields[0] ?? null;
  else if (verb === 'go' && fields[0] && isGoVersion(fields[0])) parsed.go = fields[0];
  else if (verb === 'toolchain' && fields[0]?.startsWith('go') && isGoVersion(fields[0].slice(2)))
    parsed.toolchain = fields[0].slice(2);
  else if (verb === 'require' && fields[0]) parsed.requires.push(fields[0]);
  else if (verb === 'use' && fields[0]) parsed.uses.push(fields[0]);
  else if (verb === 'replace') {
    const arrow = fields.indexOf('=>');
    if (arrow < 1 || !fields[arrow + 1]) return;
    parsed.replaces.push({
      from: fields[0] as string,
      to: fields[arrow + 1] as string,
      toVersion: fields[arrow + 2] ?? null,
    });
  }
}

function unquote(field: string): string {
  return /^".*"$|^`.*`$/.test(field) ? field.slice(1, -1) : field;
}

/** A released Go version as go.mod writes it: 1.22, 1.22.5, 1.23rc1. */
export function isGoVersion(text: string): boolean {
  return /^1\.\d{1,3}(\.\d{1,3}|rc\d{1,2}|beta\d{1,2})?$/.test(text);
}

/** Compares Go versions by their numbers (1.9 < 1.21 < 1.21.3); a release candidate counts as its release's .0. */
export function compareGoVersions(a: string, b: string): number {
  const numbers = (version: string) => {
    const [major, minor, patch] = version.replace(/(rc|beta)\d+$/, '').split('.');
    return [Number(major), Number(minor), Number(patch ?? -1)];
  };
  const [x, y] = [numbers(a), numbers(b)];
  for (let index = 0; index < 3; index++) if (x[index] !== y[index]) return (x[index] as number) - (y[index] as number);
  return 0;
}

/** Whether a replacement's target is a folder of the repository (or the disk) rather than a module of a registry. */
export function isFolderTarget(target: string): boolean {
  return /^\.{1,2}(\/|$)|^\//.test(target);
}
