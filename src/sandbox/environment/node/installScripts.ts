// Dependencies' install scripts run in the install, as CI runs them, or when that fails, one package
// at a time and best effort (installScripts.cjs, in the build container); what failed or was
// skipped reaches the report.
import { readFileSync } from 'node:fs';
import type { InstallScriptProblem } from '../../../agent/environment.js';

/** The runner, as the build container gets it (/env-input/<file>). */
export const installScriptRunner = {
  file: 'durable-debugger-install-scripts.cjs',
  text: readFileSync(new URL('./installScripts.cjs', import.meta.url), 'utf8'),
};

const marker = 'install-scripts: ';
const maxProblems = 20;
const maxLineLength = 300;
const outcomes: readonly unknown[] = ['failed', 'timed out', 'opted out', 'not allowed'];
const isOutcome = (value: unknown): value is InstallScriptProblem['outcome'] => outcomes.includes(value);

/** The runner's summary line, or null for any other line. Install scripts print too: the summary is checked, and capped. */
export function parseInstallScriptsLine(line: string): { ran: number; problems: InstallScriptProblem[] } | null {
  if (!line.startsWith(marker)) return null;
  const record = parseJson(line.slice(marker.length)) as { ran?: unknown; problems?: unknown } | null;
  if (typeof record?.ran !== 'number' || !Array.isArray(record.problems)) return null;
  return { ran: record.ran, problems: checkedProblems(record.problems) };
}

/** The problems an image's label keeps (JSON), checked as the summary line is. */
export function parseInstallScriptsLabel(label: string | undefined): InstallScriptProblem[] {
  const value = label === undefined ? null : parseJson(label);
  return Array.isArray(value) ? checkedProblems(value) : [];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function checkedProblems(values: unknown[]): InstallScriptProblem[] {
  const text = (each: unknown) => (typeof each === 'string' ? each.slice(0, maxLineLength) : '');
  return values.slice(0, maxProblems).flatMap((each): InstallScriptProblem[] => {
    const problem = (each ?? {}) as Record<string, unknown>;
    const outcome = problem.outcome;
    if (!isOutcome(outcome)) return [];
    return [
      {
        package: text(problem.package),
        outcome,
        detail: text(problem.detail),
        lastLines: (Array.isArray(problem.lastLines) ? problem.lastLines : []).slice(-15).map(text),
      },
    ];
  });
}
