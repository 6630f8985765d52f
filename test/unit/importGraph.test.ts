// The module map's arrows (docs/architecture.md), checked on the import graph of every .ts file:
// - workflows/ imports only its own modules, src/agent, src/temporal, Temporal's workflow and
//   common packages, and activities only as types (the workflow bundle holds nothing else);
// - nothing else imports workflows/ but the tests (the worker hands workflows/index.ts to the
//   bundler as a path, which is not an import);
// - the product (src/, workflows/, activities/) never imports the tooling around it (bench/,
//   harness/, deploy/, scripts/): the installed package ships the product alone;
// - nothing but test/ imports test/ (product and tooling stand without tests);
// - src/agent/ imports only zod and its own modules (the pure core);
// - activities/ import only src/agent, src/model, src/sandbox and src/temporal (the design card);
// - in src/ only the worker imports activities/, and only src/cli imports src/cli (the top);
// - no module imports itself through others (no cycles);
// - every file of the product is reached from its entry points, the CLI and the workflow bundle
//   (tooling does not live inside the product).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { projectRoot } from '../../src/config.js';

const skipped = new Set(['node_modules', '.git', '.durable-debugger']);

function typeScriptFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    if (skipped.has(entry.name)) return [];
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return typeScriptFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

interface ImportEdge {
  /** The importing file, relative to the repository root, with / separators. */
  from: string;
  /** The module specifier as written. */
  specifier: string;
  /** For a relative specifier, the imported file relative to the repository root; else null (a package). */
  to: string | null;
  /** `import type` / `export type`: erased when compiled, so it puts nothing in a bundle. */
  typeOnly: boolean;
}

/** Every import of a file: static, type-only, re-exports, side-effect and dynamic `import()`. */
function importsOf(file: string, text: string): ImportEdge[] {
  const from = toPosix(relative(projectRoot, file));
  const typeOnly = new Set<string>();
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  for (const statement of source.statements) {
    const isTypeOnly =
      (ts.isImportDeclaration(statement) && statement.importClause?.isTypeOnly) ||
      (ts.isExportDeclaration(statement) && statement.isTypeOnly);
    const module =
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
    if (isTypeOnly && module && ts.isStringLiteral(module)) typeOnly.add(module.text);
  }
  return ts.preProcessFile(text, true, true).importedFiles.map(({ fileName: specifier }) => ({
    from,
    specifier,
    to: specifier.startsWith('.') ? toPosix(relative(projectRoot, resolve(dirname(file), specifier))) : null,
    typeOnly: typeOnly.has(specifier),
  }));
}

function toPosix(path: string): string {
  return path.split(sep).join('/');
}

function topFolder(path: string): string {
  return path.split('/')[0] ?? '';
}

const product = ['src', 'workflows', 'activities'];
/** Where the product starts: the command (bin/ runs it) and the workflow bundle (the worker hands it to the bundler). */
const entryPoints = ['src/cli/main.ts', 'workflows/index.ts'];
/** What activities may import besides their own folder (docs/architecture.md). */
const activityImports = ['src/agent/', 'src/model/', 'src/sandbox/', 'src/temporal/'];
const tooling = ['bench', 'harness', 'deploy', 'scripts'];
/** What workflow code may import besides its own folder: the pure core and the shared definitions. */
const workflowPackages = ['@temporalio/workflow', '@temporalio/common'];

/** The rules' violations, one line each. */
function violations(edges: ImportEdge[]): string[] {
  const found: string[] = [];
  for (const edge of edges) {
    const source = topFolder(edge.from);
    const target = edge.to === null ? null : topFolder(edge.to);
    if (!['workflows', 'test'].includes(source) && target === 'workflows') {
      found.push(`${edge.from} imports workflow code (${edge.specifier}): only workflows/ and the tests may`);
    }
    if (source === 'workflows' && !edge.typeOnly) {
      const allowed =
        edge.to === null
          ? workflowPackages.includes(edge.specifier)
          : ['workflows/', 'src/agent/', 'src/temporal/definitions.js', 'src/temporal/retryPolicies.js'].some(
              (prefix) => edge.to!.startsWith(prefix),
            );
      if (!allowed)
        found.push(
          `${edge.from} imports ${edge.specifier}: workflow code imports only its own modules, src/agent and src/temporal's definitions (activities as types)`,
        );
    }
    if (product.includes(source) && target !== null && tooling.includes(target)) {
      found.push(
        `${edge.from} imports ${edge.specifier}: the product never imports the tooling around it (${tooling.join(', ')})`,
      );
    }
    if (source !== 'test' && target === 'test') {
      found.push(`${edge.from} imports test code (${edge.specifier}): move what it needs out of test/`);
    }
    if (
      edge.from.startsWith('src/agent/') &&
      (edge.to === null ? edge.specifier !== 'zod' : !edge.to.startsWith('src/agent/'))
    ) {
      found.push(`${edge.from} imports ${edge.specifier}: src/agent is pure and imports only zod and its own modules`);
    }
    if (source === 'activities' && target === 'src' && !activityImports.some((prefix) => edge.to!.startsWith(prefix))) {
      found.push(
        `${edge.from} imports ${edge.specifier}: activities import only ${activityImports.join(', ')} (and their own folder)`,
      );
    }
    if (source === 'src' && target === 'activities' && edge.from !== 'src/worker.ts') {
      found.push(`${edge.from} imports ${edge.specifier}: in src/ only the worker (src/worker.ts) imports activities`);
    }
    if (product.includes(source) && edge.to?.startsWith('src/cli/') && !edge.from.startsWith('src/cli/')) {
      found.push(
        `${edge.from} imports ${edge.specifier}: the CLI is the top; nothing in the product below it imports it`,
      );
    }
  }
  return found;
}

/** The module a relative import names: its .ts file (specifiers name the compiled .js). */
function moduleOf(to: string): string {
  return to.replace(/\.js$/, '.ts');
}

/** Each import cycle once, as the files around it. */
function cycles(edges: ImportEdge[]): string[] {
  const next = new Map<string, string[]>();
  for (const edge of edges) {
    if (edge.to === null) continue;
    const from = moduleOf(edge.from);
    next.set(from, [...(next.get(from) ?? []), moduleOf(edge.to)]);
  }
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, path: string[]) => {
    state.set(file, 'open');
    for (const to of next.get(file) ?? []) {
      if (state.get(to) === 'open') found.push([...path.slice(path.indexOf(to)), to].join(' → '));
      else if (!state.has(to)) visit(to, [...path, to]);
    }
    state.set(file, 'done');
  };
  for (const file of [...next.keys()].sort()) if (!state.has(file)) visit(file, [file]);
  return found;
}

/** Product files that no chain of imports from the entry points reaches. */
function unreachedFromEntryPoints(files: string[], edges: ImportEdge[]): string[] {
  const next = new Map<string, string[]>();
  for (const edge of edges) {
    if (edge.to === null) continue;
    const from = moduleOf(edge.from);
    next.set(from, [...(next.get(from) ?? []), moduleOf(edge.to)]);
  }
  const reached = new Set<string>();
  const pending = [...entryPoints];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (reached.has(file)) continue;
    reached.add(file);
    pending.push(...(next.get(file) ?? []));
  }
  return files.filter((file) => product.includes(topFolder(file)) && !reached.has(file)).sort();
}

function projectImports(): ImportEdge[] {
  return typeScriptFiles(projectRoot).flatMap((file) => importsOf(file, readFileSync(file, 'utf8')));
}

function projectFiles(): string[] {
  return typeScriptFiles(projectRoot).map((file) => toPosix(relative(projectRoot, file)));
}

test('the import graph keeps the arrows of the module map', () => {
  const edges = projectImports();
  // The parser sees the repository: the workflow imports the run's definitions, the tests the harness.
  assert.ok(
    edges.some((edge) => edge.from === 'workflows/debugRepository.ts' && edge.to === 'src/temporal/definitions.js'),
    'the workflow imports the definitions',
  );
  assert.ok(
    edges.some((edge) => edge.from.startsWith('test/integration/') && edge.to === 'harness/devStack.js'),
    'the integration tests import the harness',
  );
  const found = violations(edges);
  assert.deepEqual(found, [], found.join('\n'));
});

test('no module imports itself through others', () => {
  const found = cycles(projectImports());
  assert.deepEqual(found, [], found.join('\n'));
});

test('every file of the product is reached from the CLI or the workflow bundle: no tooling lives inside it', () => {
  const files = projectFiles();
  assert.ok(files.includes('src/sandbox/store/openStore.ts') && files.includes('activities/model.ts'), 'files found');
  const unreached = unreachedFromEntryPoints(files, projectImports());
  assert.deepEqual(unreached, [], unreached.join('\n'));
});

test('a cycle and a product file that only tooling uses are found', () => {
  const at = (path: string) => join(projectRoot, path);
  const edges = [
    // The store's interface file that also held its factory: the factory imports the backends, which import the interface.
    ...importsOf(at('src/sandbox/store/contentStore.ts'), "import { FolderStore } from './folderStore.js';"),
    ...importsOf(at('src/sandbox/store/folderStore.ts'), "import type { ContentStore } from './contentStore.js';"),
    ...importsOf(at('src/cli/main.ts'), "import { run } from './commands/runCommand.js';"),
    ...importsOf(at('bench/clusterThroughput.ts'), "import { startCluster } from '../src/cluster/clusterLauncher.js';"),
  ];
  assert.deepEqual(cycles(edges), [
    'src/sandbox/store/contentStore.ts → src/sandbox/store/folderStore.ts → src/sandbox/store/contentStore.ts',
  ]);
  assert.deepEqual(
    unreachedFromEntryPoints(
      ['src/cli/main.ts', 'src/cli/commands/runCommand.ts', 'src/cluster/clusterLauncher.ts'],
      edges,
    ),
    ['src/cluster/clusterLauncher.ts'],
  );
});

test('the worker refers to the workflow code only as the bundle’s path', () => {
  const worker = readFileSync(join(projectRoot, 'src', 'worker.ts'), 'utf8');
  assert.match(worker, /workflowsPath = join\(projectRoot, 'workflows', 'index\.ts'\)/);
  const pathReferences = ['activities', 'src', 'bench', 'harness', 'deploy']
    .flatMap((folder) => typeScriptFiles(join(projectRoot, folder)))
    // A path into workflows/: 'workflows/…', '../workflows/…', or a path segment in join(…, 'workflows', …).
    .filter((file) => /['"`](\.{1,2}\/)*workflows\/|,\s*['"`]workflows['"`]\s*[,)]/.test(readFileSync(file, 'utf8')))
    .map((file) => toPosix(relative(projectRoot, file)));
  assert.deepEqual(pathReferences, ['src/worker.ts']);
});

test('each kind of import that breaks a rule is found', () => {
  const at = (path: string) => join(projectRoot, path);
  const found = violations([
    // nothing but workflows/ and test/ imports workflows/
    ...importsOf(at('activities/model.ts'), "import type { DebugRun } from '../workflows/debugRepository.js';"),
    ...importsOf(at('src/cli/main.ts'), "export { something } from '../../workflows/index.js';"),
    ...importsOf(at('harness/devStack.ts'), "import '../workflows/index.js';"),
    // nothing but test/ imports test/
    ...importsOf(at('bench/runBenchmarks.ts'), "const harness = await import('../test/support/testSandbox.js');"),
    ...importsOf(at('scripts/reliability.ts'), "import '../test/unit/tools.test.js';"),
    ...importsOf(at('deploy/cluster/clusterLauncher.ts'), "import { x } from '../../test/support/postgres.js';"),
    // src/agent is pure
    ...importsOf(
      at('src/agent/tools.ts'),
      "import { readFile } from 'node:fs/promises';\nimport { x } from '../sandbox/paths.js';",
    ),
    // the product never imports tooling
    ...importsOf(at('src/worker.ts'), "import { startTestServer } from '../harness/devStack.js';"),
    ...importsOf(at('activities/sandbox.ts'), "import { clusterPorts } from '../deploy/cluster/clusterSettings.js';"),
    // workflow code imports only the core, the definitions and activities as types
    ...importsOf(at('workflows/modelCall.ts'), "import { createModelActivities } from '../activities/model.js';"),
    ...importsOf(at('workflows/sandboxSteps.ts'), "import { SandboxHost } from '../src/sandbox/sandboxHost.js';"),
    ...importsOf(at('workflows/progress.ts'), "import { readFile } from 'node:fs/promises';"),
    // activities import only the core, the model client, the sandbox and the definitions
    ...importsOf(at('activities/model.ts'), "import { startScriptedModel } from '../src/demo/scriptedModel.js';"),
    // in src/ only the worker imports activities
    ...importsOf(
      at('src/sandbox/sandboxHost.ts'),
      "import type { HostActivities } from '../../activities/sandbox.js';",
    ),
    // the CLI is the top
    ...importsOf(at('src/worker.ts'), "import { follow } from './cli/follow.js';"),
  ]);
  assert.equal(found.length, 16, found.join('\n'));
  // And what is allowed is not reported: the tests and the workflows import downwards.
  assert.deepEqual(
    violations([
      ...importsOf(at('test/unit/x.test.ts'), "import { DebugRun } from '../../workflows/debugRepository.js';"),
      ...importsOf(at('workflows/index.ts'), "import { tools } from '../src/agent/tools.js';"),
      ...importsOf(
        at('workflows/modelCall.ts'),
        "import type { ModelActivities } from '../activities/model.js';\nimport { proxyActivities } from '@temporalio/workflow';",
      ),
      ...importsOf(at('bench/runBenchmarks.ts'), "import { startTestServer } from '../harness/devStack.js';"),
      ...importsOf(at('deploy/cluster/clusterLauncher.ts'), "import { loadConfig } from '../../src/config.js';"),
      ...importsOf(
        at('activities/sandbox.ts'),
        "import { SandboxHost } from '../src/sandbox/sandboxHost.js';\nimport { shared } from './attempts.js';",
      ),
      ...importsOf(at('src/worker.ts'), "import { createModelActivities } from '../activities/model.js';"),
      ...importsOf(at('src/cli/main.ts'), "import { runCommand } from './commands/runCommand.js';"),
      ...importsOf(
        at('src/agent/tools.ts'),
        "import { z } from 'zod';\nimport type { Message } from './conversation.js';",
      ),
    ]),
    [],
  );
});
