// Node's check that the package's own name resolves to /workspace, not to a copy from the
// registry. Pure: the builder runs it (probeRunner.ts).
import type { EnvironmentProbe } from '../planTypes.js';

/**
 * The package's own name must resolve to /workspace when the environment has a package of that
 * name (a dependency depended on the project itself): Node resolves a name to the package itself
 * first when its package.json has `exports`, else through node_modules folders, /node_modules included.
 * `packageJson` is where the check reads the package's own manifest: the workspace's in a probe, the
 * install's copy in the build's own check (buildChecks.ts), where /workspace holds only node_modules.
 */
export function nodeOwnNameProbe(
  manifests: Record<string, string>,
  ifPresent: boolean,
  packageJson = '/workspace/package.json',
): EnvironmentProbe | null {
  let name: unknown;
  try {
    name = (JSON.parse(manifests['package.json'] ?? 'null') as { name?: unknown } | null)?.name;
  } catch {
    return null;
  }
  if (typeof name !== 'string' || !/^(@[a-z0-9][\w.~-]*\/)?[a-z0-9][\w.~-]*$/i.test(name)) return null;
  const program = `
const fs = require('fs'), path = require('path');
const name = ${JSON.stringify(name)};
const own = JSON.parse(fs.readFileSync(${JSON.stringify(packageJson)}, 'utf8'));
if (own.exports !== undefined) process.exit(0);
for (const dir of require.resolve.paths(name) || []) {
  const candidate = path.join(dir, name);
  if (!fs.existsSync(candidate)) continue;
  const real = fs.realpathSync(candidate);
  if (real === '/workspace' || real.startsWith('/workspace/')) process.exit(0);
  let version = '?';
  try { version = JSON.parse(fs.readFileSync(path.join(real, 'package.json'), 'utf8')).version; } catch {}
  console.log('node: require("' + name + '") loads ' + candidate + (real === candidate ? '' : ' (' + real + ')') + ', ' + name + '@' + version + ' from the registry, not the workspace');
  process.exit(1);
}`;
  return {
    description: "node: the package's own name resolves to /workspace",
    files: ['package.json'],
    advice:
      'A dependency or the image installed the package itself into node_modules: durable-debugger removes the copy its own install pulls in; in an image, Dockerfile or setup commands you bring, keep the package out of node_modules.',
    script: [
      ...(ifPresent ? ['command -v node >/dev/null 2>&1 || exit 0'] : []),
      `cd /workspace && node - <<'DURABLE_DEBUGGER_PROBE'`,
      program.trim(),
      'DURABLE_DEBUGGER_PROBE',
    ].join('\n'),
  };
}
