// Run in the build container after the install (node <this> <project> <workspace> <folder>...):
// makes, in /workspace of the image, each node_modules folder the installer made in <project>
// (the root's, each workspace member's) as a folder of links to what it holds there. Each sandbox
// mounts a copy of these folders of its own (Docker copies a few hundred links in milliseconds,
// where copying the packages took tens of seconds), writable for the tools' caches (.vite-temp,
// .cache), while the packages stay read-only in <project>. A link to a workspace member (npm, yarn
// and pnpm workspaces link members into node_modules) points at the member in /workspace: the
// install's copy of a member holds only its package.json. State files (.modules.yaml,
// .yarn-state.yml, .package-lock.json) and pnpm's .bin scripts are copied.
// It runs under the repository's Node (as old as 12): plain CommonJS.
'use strict';
const fs = require('fs');
const path = require('path');

const [project, workspace, ...folders] = process.argv.slice(2);

const isInstalled = (location) => location.split('/').includes('node_modules');

/** Where a link made for `from` should point: the workspace's own folder for a member, else `from` itself. */
function target(from) {
  let real;
  try {
    real = fs.realpathSync(from);
  } catch {
    // A link to a member file the install has not (a bin): resolved as written.
    const stats = fs.lstatSync(from);
    real = stats.isSymbolicLink() ? path.resolve(path.dirname(from), fs.readlinkSync(from)) : from;
  }
  if ((real === project || real.startsWith(`${project}/`)) && !isInstalled(path.relative(project, real)))
    return path.join(workspace, path.relative(project, real));
  return from;
}

/** `source`'s entries in `dest`: folders that group entries (@scope, .bin) entry by entry, the rest linked. */
function mirror(source, dest, grouped) {
  fs.mkdirSync(dest, { recursive: true });
  fs.chmodSync(dest, 0o777);
  if (!fs.existsSync(source)) return 0;
  const entries = fs.readdirSync(source);
  let count = 0;
  for (const name of entries) {
    const from = path.join(source, name);
    const to = path.join(dest, name);
    const stats = fs.lstatSync(from);
    if (grouped && stats.isDirectory() && (name.startsWith('@') || name === '.bin')) {
      count += mirror(from, to, false);
    } else if (stats.isFile()) {
      fs.copyFileSync(from, to);
      fs.chmodSync(to, stats.mode & 0o111 ? 0o777 : 0o666);
    } else {
      fs.symlinkSync(target(from), to);
      count++;
    }
  }
  return count;
}

for (const folder of folders) {
  const count = mirror(path.join(project, folder), path.join(workspace, folder), true);
  process.stdout.write(`${path.join(workspace, folder)}: ${count} links into ${path.join(project, folder)}\n`);
}
