// A plan's checks of its own install (plan.checks), run by the build that makes the image a run
// uses, at its end, instead of in a probe container after it (a container start, about 0.2 s of
// every cold build). The build container has what the run's will have: the image's files as they
// are committed, /workspace (the repository's copy for a project's install; node_modules for
// Node's), and the checks run with the sandbox's variables only, never the build's settings. They
// run as root, who reads every file the sandbox's user reads: a copy from elsewhere that the
// sandbox would load, the check sees too. The image's key holds its script, checks included, so
// every run reusing the image reuses a checked one.
import { sandboxContainerEnv } from '../container/sandboxEnv.js';
import { shellQuote } from '../shellQuote.js';
import type { EnvironmentPlan, EnvironmentProbe } from './planTypes.js';
import { probeFailure, probesScript, probeTimeLimitSeconds, type ProbeFailure } from './probeRunner.js';

/** The line the build prints before its checks: what follows is theirs. */
const checksMark = '@@durable-debugger-checks';

/** The plan with its checks at the end of its last build: the project's own install if it has one, else its install. */
export function withBuildChecks(plan: EnvironmentPlan): EnvironmentPlan {
  const checks = plan.checks ?? [];
  if (checks.length === 0) return plan;
  const run = [
    `echo ${checksMark}`,
    // From /, with the sandbox's variables only, as the probe container runs them, and within its time.
    `cd / && timeout -k 5 ${probeTimeLimitSeconds} env -i ${sandboxContainerEnv(plan.containerEnv).map(shellQuote).join(' ')} sh -c ${shellQuote(probesScript(checks))}`,
  ].join('\n');
  return plan.projectInstall
    ? { ...plan, projectInstall: { script: `${plan.projectInstall.script}\n${run}` } }
    : { ...plan, script: `${plan.script}\n${run}` };
}

/** Reads a build's lines: once its checks have started, what they print is kept for their failure. */
export class BuildChecksOutput {
  private printed: string[] | null = null;
  private length = 0;

  /** True for the mark itself, which is no line for people. */
  read(line: string): boolean {
    if (line === checksMark) {
      this.printed = [];
      return true;
    }
    if (this.printed && this.length < 20_000) {
      this.printed.push(line);
      this.length += line.length + 1;
    }
    return false;
  }

  /** The failure of the checks, when a build that ended with exitCode had started them (they are its last step). */
  failure(checks: EnvironmentProbe[], exitCode: number): ProbeFailure | null {
    if (this.printed === null || exitCode === 0) return null;
    // timeout's own exit code once it has stopped them.
    const late = exitCode === 124 ? [`the checks did not end within ${probeTimeLimitSeconds} s`] : [];
    return probeFailure([...this.printed, ...late].join('\n'), checks, exitCode);
  }
}
