// A requirement line that installs the project itself from its checkout, as CI's do: `.`, `./`,
// `-e .`, `.[tests]`, `-e .[socks,yaml]` (httpx's requirements.txt starts so), tox's
// `{toxinidir}[tests]`. The build installs the project on its own (pythonPlan's projectInstall), so
// such a line is never handed to pip in the build's input folder, where there is no project; the
// extras it names are what CI installs with it, so their requirements are installed with the others.

/** The extras a line installs the project with ([] for none), or null when the line is not the project itself. */
export function projectLineExtras(line: string): string[] | null {
  const match = line.trim().match(/^(?:(?:-e|--editable)(?:\s+|=))?\.\/?(?:\[([^\]]*)\])?\s*(?:#.*)?$/);
  if (!match) return null;
  return (match[1] ?? '')
    .split(',')
    .map((extra) => extra.trim())
    .filter(Boolean);
}

/** The extras the project is installed with by any of these lines. */
export function projectExtrasNamed(lines: readonly string[]): string[] {
  return [...new Set(lines.flatMap((line) => projectLineExtras(line) ?? []))];
}
