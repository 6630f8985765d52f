// The module map's arrows (docs/architecture.md), checked on the import graph of every .ts file:
// - workflows/ imports only its own modules, src/agent, src/temporal, Temporal's workflow and
//   common packages, and activities only as types (the workflow bundle holds nothing else);
// - nothing else imports workflows/ but the tests (the worker hands workflows/index.ts to the
//   bundler as a path, which is not an import);
// - the product (src/, workflows/, activities/) never imports the tooling around it (bench/,
//   harness/, deploy/, scripts/): the installed package ships the product alone;
// - nothing but test/ imports test/ (product and tooling stand without tests);
// - src/agent/ imports only zod and its own modules (the pure core).
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
  }
  return found;
}

function projectImports(): ImportEdge[] {
  return typeScriptFiles(projectRoot).flatMap((file) => importsOf(file, readFileSync(file, 'utf8')));
}

test('the import graph keeps the arrows of the module map', () => {
  const edges = projectImports();
  // The parser sees the repository: the workflow imports the run's definitions, the tests the harness.
  assert.ok(
    edges.some((edge) => edge.from === 'workflows/debugRepository.ts' && edge.to === 'src/temporal/definitions.js'),
  );
  assert.ok(edges.some((edge) => edge.from.startsWith('test/integration/') && edge.to === 'harness/devStack.js'));
  assert.deepEqual(violations(edges), []);
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
    ...importsOf(at('bench/runBenchmarks.ts'), "const harness = await import('../test/support/sandbox.js');"),
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
  ]);
  assert.equal(found.length, 13, found.join('\n'));
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
        at('src/agent/tools.ts'),
        "import { z } from 'zod';\nimport type { Message } from './conversation.js';",
      ),
    ]),
    [],
  );
});
