// `npm run build` (and `npm pack`, through prepack): the installable package in dist/.
//   dist/cli.js                    the durable-debugger command, bundled with its dependencies (esbuild)
//   dist/chunk-<hash>.js           its parts that load only when a command needs them (code splitting):
//                                  `--version` or `list` never load the worker, its native core or the model SDKs
//   dist/chunks.json               which packages each file of the bundle holds (what the startup test checks)
//   dist/workflow-worker-thread.js the Temporal worker's workflow thread, bundled the same way
//   dist/workflow-bundle.js        the workflow code, bundled once here (Temporal's advice for production)
//   dist/workflow-bundle-traced.js the same with OpenTelemetry's workflow interceptors (workers that trace)
//   dist/releases/<target>/index.node  Temporal's native core, for the platforms we ship
// The package installs no dependencies: several of ours run install scripts (protobufjs 7 under
// @grpc/grpc-js and dockerode, ssh2, @swc/core), which npm flags on every global install and which
// nothing here needs. Bundling also starts faster than loading hundreds of modules.
// The checkout keeps running the TypeScript sources directly (node --import tsx src/cli/main.ts).
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { build, type Metafile, type Plugin } from 'esbuild';
import { projectRoot } from '../src/config.js';
import { workflowTracingModule } from '../src/temporal/tracing.js';
import { workflowsPath } from '../src/worker.js';

// An argument builds elsewhere (a comparison of builds, without touching the checkout's dist/).
const dist = process.argv[2] ? resolve(process.argv[2]) : join(projectRoot, 'dist');
/** Temporal's native core for the platforms the tool runs on (Docker's Linux containers: Linux, and macOS with Docker Desktop). */
const nativeTargets = [
  'x86_64-unknown-linux-gnu',
  'aarch64-unknown-linux-gnu',
  'x86_64-apple-darwin',
  'aarch64-apple-darwin',
];

/**
 * The worker's bundler (webpack and swc, which the prebuilt workflow bundle makes unnecessary) is
 * left out: what the worker reads of it when given a prebuilt bundle is the empty interceptor list.
 */
const withoutWorkflowBundler: Plugin = {
  name: 'without-workflow-bundler',
  setup(build) {
    build.onLoad({ filter: /@temporalio[\\/]worker[\\/]lib[\\/]workflow[\\/]bundler\.js$/ }, () => ({
      loader: 'js',
      contents: `
        const prebuilt = 'The installed durable-debugger runs its prebuilt workflow bundle; it cannot bundle workflow code.';
        exports.defaultWorkflowInterceptorModules = [];
        exports.bundleWorkflowCode = async () => { throw new Error(prebuilt); };
        exports.WorkflowCodeBundler = class { constructor() { throw new Error(prebuilt); } };
      `,
    }));
  },
};

// Bundled CommonJS modules expect require, __filename and __dirname: the ones of the bundle's file
// (the native core is found from there, under releases/).
const commonJsGlobals = [
  "import { createRequire as __createRequire } from 'node:module';",
  "import { fileURLToPath as __fileURLToPath } from 'node:url';",
  'const require = __createRequire(import.meta.url);',
  'const __filename = __fileURLToPath(import.meta.url);',
  "const __dirname = __fileURLToPath(new URL('.', import.meta.url));",
].join('\n');

await rm(dist, { recursive: true, force: true });
const started = Date.now();
const bundled = await build({
  entryPoints: {
    cli: join(projectRoot, 'src', 'cli', 'main.ts'),
    'workflow-worker-thread': join(
      projectRoot,
      'node_modules',
      '@temporalio',
      'worker',
      'lib',
      'workflow',
      'workflow-worker-thread.js',
    ),
  },
  outdir: dist,
  bundle: true,
  // Each `import()` of a command's module (src/cli/main.ts) becomes a file of its own, read and
  // compiled only when that command runs. Chunks sit beside cli.js: bundled CommonJS code finds
  // the native core and the worker's thread from its __dirname, which must stay dist/.
  splitting: true,
  metafile: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  // Smaller code parses faster at every start; names are kept (errors' class names are their failure types).
  minify: true,
  keepNames: true,
  // Optional native add-ons our dependencies try and do without (ssh2's crypto, cpu-features, pg-native).
  external: ['cpu-features', 'pg-native', '*.node'],
  banner: { js: commonJsGlobals },
  plugins: [withoutWorkflowBundler],
  logLevel: 'warning',
  logOverride: { 'require-resolve-not-external': 'silent' },
});
await writeFile(join(dist, 'chunks.json'), `${JSON.stringify(packagesByFile(bundled.metafile), null, 1)}\n`);
const bundle = await bundleWorkflowCode({ workflowsPath, logger: quietLogger() });
await writeFile(join(dist, 'workflow-bundle.js'), withoutSourcesText(bundle.code));
// Workers that trace (OTEL_EXPORTER_OTLP_ENDPOINT) run the same code with OpenTelemetry's workflow interceptors.
const traced = await bundleWorkflowCode({
  workflowsPath,
  logger: quietLogger(),
  workflowInterceptorModules: [workflowTracingModule()],
});
await writeFile(join(dist, 'workflow-bundle-traced.js'), withoutSourcesText(traced.code));
// source-map (the worker's stack traces of workflow code) reads its WebAssembly beside its module.
await copyFile(join(projectRoot, 'node_modules', 'source-map', 'lib', 'mappings.wasm'), join(dist, 'mappings.wasm'));
// So do our modules that read a file of theirs (`new URL('./file', import.meta.url)`): bundled, they are dist/cli.js.
for (const file of await filesReadBesideTheirModule()) await copyFile(file, join(dist, basename(file)));
for (const target of nativeTargets) {
  const from = join(projectRoot, 'node_modules', '@temporalio', 'core-bridge', 'releases', target, 'index.node');
  const to = join(dist, 'releases', target, 'index.node');
  await mkdir(dirname(to), { recursive: true });
  await copyFile(from, to);
}
console.log(`build: dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);

/**
 * The worker maps workflow stack traces through the bundle's inline source map, which also holds
 * every source file's text: two thirds of the bundle, parsed at every worker start, never needed.
 */
function withoutSourcesText(code: string): string {
  const marker = '//# sourceMappingURL=data:application/json;charset=utf-8;base64,';
  const at = code.lastIndexOf(marker);
  if (at < 0) throw new Error('build: the workflow bundle has no inline source map');
  const map = JSON.parse(Buffer.from(code.slice(at + marker.length).trim(), 'base64').toString()) as Record<
    string,
    unknown
  >;
  delete map.sourcesContent;
  return `${code.slice(0, at)}${marker}${Buffer.from(JSON.stringify(map)).toString('base64')}\n`;
}

/** For each file of the bundle, the packages (node_modules) and our folders whose code it holds. */
function packagesByFile(metafile: Metafile): Record<string, string[]> {
  const byFile: Record<string, string[]> = {};
  for (const [output, { inputs }] of Object.entries(metafile.outputs)) {
    if (!output.endsWith('.js')) continue;
    const names = new Set<string>();
    for (const input of Object.keys(inputs)) {
      const inPackage = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      names.add(inPackage ? (inPackage[1] as string) : input.split('/').slice(0, 2).join('/'));
    }
    byFile[basename(output)] = [...names].sort();
  }
  return byFile;
}

/** The files our modules read beside themselves (the prebuilt workflow bundle aside, which is made here). */
async function filesReadBesideTheirModule(): Promise<string[]> {
  const found = new Map<string, string>();
  for (const folder of ['src', 'activities']) {
    for (const entry of await readdir(join(projectRoot, folder), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const module = join(entry.parentPath, entry.name);
      for (const match of (await readFile(module, 'utf8')).matchAll(/new URL\('\.\/([^']+)', import\.meta\.url\)/g)) {
        const name = match[1] as string;
        if (name === 'workflow-bundle.js' || name === 'workflow-bundle-traced.js') continue;
        const file = join(dirname(module), name);
        if (found.has(name) && found.get(name) !== file)
          throw new Error(`build: two modules read a file named ${name}`);
        found.set(name, file);
      }
    }
  }
  return [...found.values()];
}

function quietLogger() {
  const ignore = () => undefined;
  return {
    log: ignore,
    trace: ignore,
    debug: ignore,
    info: ignore,
    warn: ignore,
    error: (message: string) => console.error(message),
  };
}
