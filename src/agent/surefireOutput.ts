// The Java environment's test command reads Surefire's XML reports (target/surefire-reports/TEST-*.xml
// of every module) after Maven ends and prints them as marked lines (java/surefireReports.ts makes
// them); this reads those lines back. A module whose tests did not run because its build failed
// (a compile error) counts as a failure named after the module: a build failure, never "0 passed".

/** The mark each line of the reports' summary starts with. */
export const surefireMark = '[surefire-reports]';

export interface SurefireCounts {
  passed: number;
  failed: number;
  skipped: number;
  failing: string[];
}

/** The counts and failing tests of the summary, or null when the output has none. */
export function parseSurefireSummary(output: string): SurefireCounts | null {
  const lines = output
    .split('\n')
    .filter((line) => line.startsWith(`${surefireMark} `))
    .map((line) => line.slice(surefireMark.length + 1).trim());
  const total = [...lines].reverse().find((line) => line.startsWith('total: '));
  const counts = total?.match(/^total: (\d+) passed, (\d+) failed, (\d+) skipped(?:, (\d+) not built)?/);
  if (!counts) return null;
  const failing: string[] = [];
  for (const line of lines) {
    const failed = line.match(/^FAILED (.+)$/);
    if (failed) failing.push(failed[1] as string);
    const notBuilt = line.match(/^NOT BUILT (.+?): /);
    if (notBuilt) failing.push(`${notBuilt[1]} (build failure: no Surefire reports)`);
  }
  return {
    passed: Number(counts[1]),
    failed: Number(counts[2]) + Number(counts[4] ?? 0),
    skipped: Number(counts[3]),
    failing: [...new Set(failing)],
  };
}
