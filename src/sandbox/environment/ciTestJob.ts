// The job of a repository's GitHub Actions CI that runs its tests, as the sandbox can stand for it:
// the first job, in .github/workflows' order, with a step that runs a test suite. What it gives the
// build: the variables it sets for that step (the workflow's, the job's and the step's `env:`; CI is
// where many repositories say what their tests need set: DATABASE_URL=sqlite://, a settings module,
// TZ), and the commands of its steps up to that one, which the ecosystems read for what they install
// (python/ciPipInstalls.ts). Only literal values are taken: an expression (`${{ secrets.X }}`,
// `${{ matrix.python }}`) is CI's to fill; a job with `services:` or a `container:` describes a
// machine the sandbox is not (its variables point at a database it has not). The file is the
// repository's, so the sandbox's own variables are never taken from it (keptBySandbox).
import { parse } from 'yaml';
import { keptBySandbox } from '../container/sandboxEnv.js';

/** GitHub Actions' workflow files: .github/workflows/*.yml or *.yaml. */
export function isCiWorkflow(path: string): boolean {
  return /^\.github\/workflows\/[^/]+\.ya?ml$/.test(path);
}

export interface CiTestJob {
  /** The file and job, for the report: `.github/workflows/tests.yml (job test)`. */
  from: string;
  /** The variables taken, as NAME=value lines. */
  variables: string[];
  /** The `run:` text of each step up to the one that runs the tests, in order. */
  commands: string[];
}

// A command that runs a test suite, in the words of the runners and package managers we build for,
// after what starts it through a tool (npx, poetry run, python -m, a variable set for it).
const testRunner =
  /^(pytest|py\.test|unittest|tox|nox|hatch test|(npm|pnpm|yarn|bun)( run)? test(:\S*)?|npm t|jest|vitest|mocha|node --test|go test|cargo (test|nextest)|\.?\/?mvnw? .*\b(test|verify)|\.?\/?gradlew? .*\b(test|check)|ctest|make (test|check))(\s|$)/;
const launcher =
  /^(\w+=\S*\s+|npx\s+|(pnpm|yarn|bun) exec\s+|(poetry|uv|pdm|hatch|pipenv) run\s+|python3?(\.\d+)? -m\s+|time\s+)/;

function runsTests(run: string): boolean {
  return run.split(/\n|&&|\|\||;|\|/).some((part) => {
    let command = part.trim();
    for (let match = launcher.exec(command); match; match = launcher.exec(command))
      command = command.slice(match[0].length);
    return testRunner.test(command);
  });
}

/**
 * The first job, in the workflow files' order, with a step that runs tests, that the sandbox can
 * stand for; null when no workflow has one. A file that is not YAML is passed over.
 */
export function ciTestJob(manifests: Record<string, string>): CiTestJob | null {
  // The plan and the Python plan both ask, of the same manifests: the files are parsed once.
  if (!jobsRead.has(manifests)) jobsRead.set(manifests, readCiTestJob(manifests));
  return jobsRead.get(manifests) ?? null;
}

const jobsRead = new WeakMap<Record<string, string>, CiTestJob | null>();

function readCiTestJob(manifests: Record<string, string>): CiTestJob | null {
  for (const path of Object.keys(manifests).filter(isCiWorkflow).sort()) {
    const workflow = parsed(manifests[path] as string);
    const jobs = record(workflow?.jobs);
    for (const [jobName, value] of Object.entries(jobs ?? {})) {
      const job = record(value);
      if (!job || job.services !== undefined || job.container !== undefined || !runsOnLinux(job['runs-on'])) continue;
      const steps = Array.isArray(job.steps) ? job.steps.map(record) : [];
      const testStep = steps.findIndex((candidate) => typeof candidate?.run === 'string' && runsTests(candidate.run));
      if (testStep === -1) continue;
      const step = steps[testStep];
      const merged = { ...record(workflow?.env), ...record(job.env), ...record(step?.env) };
      return {
        from: `${path} (job ${jobName})`,
        variables: Object.entries(merged).flatMap(([name, value]) => literal(name, value)),
        commands: steps.slice(0, testStep + 1).flatMap((each) => (typeof each?.run === 'string' ? [each.run] : [])),
      };
    }
  }
  return null;
}

function parsed(text: string): Record<string, unknown> | null {
  try {
    return record(parse(text));
  } catch {
    return null;
  }
}

function record(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** A runner named as Linux, or by an expression or label the sandbox may stand for; not Windows or macOS. */
function runsOnLinux(runsOn: unknown): boolean {
  const labels = Array.isArray(runsOn) ? runsOn : [runsOn];
  return !labels.some((label) => typeof label === 'string' && /^(windows|macos)/i.test(label));
}

// Where the CI runner keeps its toolchains: the sandbox's image has its own, elsewhere.
const toolchainPlaces =
  /^(JAVA_HOME|JAVA_HOME_\w+|GOROOT|RUSTUP_HOME|PYTHONHOME|M2_HOME|MAVEN_HOME|GRADLE_HOME|ANDROID_\w*|CC|CXX|LD)$/;
const runnerPaths = /\/home\/runner|\/opt\/hostedtoolcache|\/Users\/runner|^[A-Za-z]:\\/;

/** NAME=value for a literal value the sandbox can take; none for an expression, the sandbox's own names, the runner's places. */
function literal(name: string, value: unknown): string[] {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || keptBySandbox(name) || /^(GITHUB|RUNNER)_/.test(name)) return [];
  if (toolchainPlaces.test(name)) return [];
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return [];
  const text = String(value);
  return text.includes('${{') || runnerPaths.test(text) || /[\0\n\r]/.test(text) ? [] : [`${name}=${text}`];
}
