// Runs the install scripts of a Node project's dependencies, best effort: a script that fails is
// reported (which package, its exit, its last lines) and the install goes on: an environment does
// not sink because a package could not fetch a browser.
// With --install, it runs the package manager's install first, with the dependencies' scripts, as
// the project's CI does (the manager's order and rules, one start of it); if that install fails or
// does not end in time, it installs again without them and runs them itself, one package at a time,
// dependencies first, each through the package manager's own rebuild command. Without --install,
// only the latter, after an install that skipped them.
// It runs in the build container under the repository's Node (as old as 12): plain CommonJS.
// Usage: node installScripts.cjs <npm|pnpm|yarn|yarn-berry|bun> [--install <command> <scripts-off options>]
//   (in the project folder)
'use strict';
const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

/** Variables that make known downloaders skip what no package registry serves (browsers, drivers, git hooks). */
const optOuts = {
  puppeteer: ['PUPPETEER_SKIP_DOWNLOAD=true', 'PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=true'],
  playwright: ['PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1'],
  'playwright-core': ['PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1'],
  'playwright-chromium': ['PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1'],
  '@playwright/test': ['PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1'],
  cypress: ['CYPRESS_INSTALL_BINARY=0'],
  electron: ['ELECTRON_SKIP_BINARY_DOWNLOAD=1'],
  chromedriver: ['CHROMEDRIVER_SKIP_DOWNLOAD=true'],
  geckodriver: ['GECKODRIVER_SKIP_DOWNLOAD=true'],
  '@sentry/cli': ['SENTRYCLI_SKIP_DOWNLOAD=1'],
  husky: ['HUSKY=0', 'HUSKY_SKIP_INSTALL=1'],
};
/** Set for every script: the opt-outs above, and no donation banners. */
const quiet = ['DISABLE_OPENCOLLECTIVE=1', 'ADBLOCK=1'];
const keptLines = 15;
/** npm's own lines around a failed script (its exit code, the command again, where its log is): no news. */
const npmBoilerplate =
  /^npm (error|ERR!) (code|path|errno|command|A complete log|Failed at|This is probably|Exit status)|^npm (error|ERR!)\s*$/;
const timeoutMs = Number(process.env.DURABLE_DEBUGGER_SCRIPT_TIMEOUT_MS) || 600000;

function readdir(dir) {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** Every installed package (real folders only: links are visited where they point), with its install scripts. */
function installedPackages(root) {
  const packages = [];
  const seen = new Set();
  function visitModules(dir) {
    for (const name of readdir(dir)) {
      const full = path.join(dir, name);
      // pnpm's store and Bun's isolated one: <name>@<version>/node_modules/<name>.
      if (name === '.pnpm' || name === '.bun')
        readdir(full).forEach((entry) => visitModules(path.join(full, entry, 'node_modules')));
      else if (name.charAt(0) === '@') readdir(full).forEach((scoped) => visitPackage(path.join(full, scoped)));
      else if (name.charAt(0) !== '.') visitPackage(full);
    }
  }
  function visitPackage(dir) {
    let stat;
    try {
      stat = fs.lstatSync(dir);
    } catch {
      return;
    }
    if (!stat.isDirectory() || seen.has(dir)) return;
    seen.add(dir);
    let manifest;
    try {
      manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    } catch {
      return;
    }
    const scripts = manifest.scripts || {};
    const run = ['preinstall', 'install', 'postinstall'].filter(
      (name) => typeof scripts[name] === 'string' && scripts[name].trim(),
    );
    // npm's rule: a binding.gyp without an install or preinstall script is built with node-gyp.
    if (!scripts.install && !scripts.preinstall && fs.existsSync(path.join(dir, 'binding.gyp'))) run.push('node-gyp');
    packages.push({
      name: String(manifest.name || ''),
      version: String(manifest.version || ''),
      dependencies: Object.keys(Object.assign({}, manifest.dependencies, manifest.optionalDependencies)),
      scripts: run,
    });
    visitModules(path.join(dir, 'node_modules'));
  }
  visitModules(path.join(root, 'node_modules'));
  return packages.filter((each) => each.name);
}

/** The packages with install scripts, each after the ones it depends on (directly or not), as installers order them. */
function inDependencyOrder(packages) {
  const byName = new Map();
  packages.forEach((each) => byName.set(each.name, (byName.get(each.name) || []).concat([each])));
  const withScripts = packages.filter((each) => each.scripts.length).sort((a, b) => (a.name < b.name ? -1 : 1));
  const reach = (start) => {
    const found = new Set();
    const queue = start.dependencies.slice();
    while (queue.length) {
      const name = queue.shift();
      if (found.has(name)) continue;
      found.add(name);
      (byName.get(name) || []).forEach((each) => queue.push.apply(queue, each.dependencies));
    }
    return found;
  };
  const ordered = [];
  const state = new Map();
  const visit = (each) => {
    if (state.has(each)) return; // done, or on the way (a cycle: any order will do)
    state.set(each, 'visiting');
    const needs = reach(each);
    withScripts.filter((other) => other !== each && needs.has(other.name)).forEach(visit);
    ordered.push(each);
  };
  withScripts.forEach(visit);
  return ordered;
}

function rebuildCommand(manager, each) {
  if (manager === 'pnpm') return ['pnpm', ['rebuild', each.name]];
  if (manager === 'yarn-berry') return ['yarn', ['rebuild', each.name]];
  // npm, and yarn 1 and Bun (which have no rebuild of one package) through npm on their node_modules.
  return ['npm', ['rebuild', each.name + '@' + each.version, '--foreground-scripts']];
}

function runOne(manager, each, env) {
  return new Promise((resolve) => {
    const command = rebuildCommand(manager, each);
    const child = spawn(command[0], command[1], { env: env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines = [];
    let partial = '';
    const onData = (chunk) => {
      const parts = (partial + chunk.toString('utf8')).split(/\r?\n|\r/);
      partial = parts.pop();
      parts.forEach((line) => {
        if (!line.trim()) return;
        process.stdout.write('  │ ' + line + '\n');
        if (npmBoilerplate.test(line)) return;
        lines.push(line);
        if (lines.length > keptLines) lines.shift();
      });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, timeoutMs);
    const finish = (code) => {
      clearTimeout(timer);
      if (partial.trim()) lines.push(partial);
      resolve({ code: code, timedOut: timedOut, lines: lines.slice(-keptLines) });
    };
    child.on('error', (error) => {
      lines.push(String(error.message));
      finish(127);
    });
    child.on('close', (code) => finish(code === null ? 1 : code));
  });
}

/** Runs a shell command with the output passed on as it comes; its exit code (1 when it was stopped after `limitMs`). */
function runPassedOn(command, env, limitMs) {
  return new Promise((resolve) => {
    // Its own process group: a stop reaches the scripts the installer started too.
    const child = spawn('sh', ['-c', command], { env: env, detached: true, stdio: ['ignore', 'inherit', 'inherit'] });
    let timedOut = false;
    const timer = limitMs
      ? setTimeout(() => {
          timedOut = true;
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }, limitMs)
      : null;
    const finish = (code) => {
      if (timer) clearTimeout(timer);
      resolve({ code: code, timedOut: timedOut });
    };
    child.on('error', () => finish(127));
    child.on('close', (code) => finish(code === null ? 1 : code));
  });
}

/** A problem for each known downloader among `packages`: its scripts ran with the opt-out set. */
function optedOut(packages) {
  return packages
    .filter((each) => optOuts[each.name])
    .map((each) => ({
      package: each.name + '@' + each.version,
      outcome: 'opted out',
      detail: 'ran with ' + optOuts[each.name].join(' ') + ': what it downloads is not installed',
      lastLines: [],
    }));
}

/**
 * The builds pnpm left out of its install (node_modules/.modules.yaml's ignoredBuilds, "name@version"
 * or "name"): pnpm 10 runs only the dependencies' scripts the project allows (onlyBuiltDependencies),
 * as the project's CI does. Bun runs only its trusted ones (trustedDependencies and its own list) and
 * names the others in `bun pm untrusted`. npm and yarn record none.
 */
function ignoredBuilds(manager, root) {
  if (manager === 'bun') return bunUntrusted(root);
  if (manager !== 'pnpm') return [];
  let text;
  try {
    text = fs.readFileSync(path.join(root, 'node_modules', '.modules.yaml'), 'utf8');
  } catch {
    return [];
  }
  try {
    const ignored = JSON.parse(text).ignoredBuilds; // pnpm 10 writes it as JSON
    return Array.isArray(ignored) ? ignored.map(String) : [];
  } catch {
    // YAML: a list under "ignoredBuilds:", one "- item" a line.
    const list = text.match(/^ignoredBuilds:\n((?:[ \t]+- .*\n?)*)/m);
    return list
      ? list[1].split('\n').flatMap((line) => (line.trim() ? [line.trim().slice(2).replace(/^'|'$/g, '')] : []))
      : [];
  }
}

/**
 * `bun pm untrusted`'s packages, as name@version: "./node_modules/<name> @<version>" lines, or with the
 * isolated linker "./node_modules/.bun/<name>@<version>/node_modules/<name> @<version>".
 */
function bunUntrusted(root) {
  const listed = spawnSync('bun', ['pm', 'untrusted'], { cwd: root, encoding: 'utf8', timeout: 60000 });
  return (listed.stdout || '').split('\n').flatMap((line) => {
    const match = line.match(/^\.\/(?:\S*\/)?node_modules\/((?:@[^/\s]+\/)?[^/\s]+) @(\S+)\s*$/);
    return match ? [match[1] + '@' + match[2]] : [];
  });
}

/** Whether pnpm's or Bun's entry (ignoredBuilds) names this package. */
function named(entry, each) {
  return entry === each.name || entry.startsWith(each.name + '@');
}

/** A problem for each package whose scripts the manager did not run because the project does not allow them. */
function notAllowed(manager, packages) {
  const rule =
    manager === 'bun'
      ? 'Bun runs only the install scripts of trusted dependencies (package.json trustedDependencies), as its CI does'
      : 'pnpm runs only the build scripts the project allows in onlyBuiltDependencies, as its CI does';
  return packages.map((each) => ({
    package: each.name + '@' + each.version,
    outcome: 'not allowed',
    detail: rule,
    lastLines: [],
  }));
}

/** The dependencies' scripts one package at a time, through the manager's rebuild: the problems. */
async function runOneByOne(manager, ordered, env) {
  const problems = [];
  for (const each of ordered) {
    const id = each.name + '@' + each.version;
    process.stdout.write('install script: ' + id + ' (' + each.scripts.join(', ') + ')\n');
    const result = await runOne(manager, each, env);
    if (result.code !== 0) {
      const outcome = result.timedOut ? 'timed out' : 'failed';
      const detail = result.timedOut ? 'stopped after ' + Math.round(timeoutMs / 1000) + ' s' : 'exit ' + result.code;
      process.stdout.write('install script: ' + id + ' ' + outcome + ' (' + detail + '); the install goes on\n');
      problems.push({ package: id, outcome: outcome, detail: detail, lastLines: result.lines });
    } else {
      problems.push.apply(problems, optedOut([each]));
    }
  }
  return problems;
}

/** Whether the project's install has ended well (or, without --install, was done before): a failure of the runner after it does not fail the build. */
let installed = process.argv[3] !== '--install';

async function main() {
  const manager = process.argv[2] || 'npm';
  const install = process.argv[3] === '--install' ? process.argv[4] : null;
  const scriptsOff = process.argv[5] || '';
  const env = Object.assign({}, process.env);
  const optOutNames = Object.keys(optOuts);
  optOutNames
    .reduce((all, name) => all.concat(optOuts[name]), quiet)
    .forEach((assignment) => {
      const at = assignment.indexOf('=');
      env[assignment.slice(0, at)] = assignment.slice(at + 1);
    });

  if (install) {
    const first = await runPassedOn(install, env, timeoutMs);
    installed = first.code === 0;
    if (installed) {
      const ignored = ignoredBuilds(manager, process.cwd());
      const withScripts = installedPackages(process.cwd()).filter((each) => each.scripts.length);
      const left = withScripts.filter((each) => ignored.some((entry) => named(entry, each)));
      const ran = withScripts.filter((each) => left.indexOf(each) < 0);
      if (ran.length) process.stdout.write('install scripts: ' + ran.length + ' ran in the install\n');
      if (left.length) process.stdout.write('install scripts: ' + left.length + ' not allowed by the project\n');
      const problems = optedOut(ran).concat(notAllowed(manager, left));
      process.stdout.write('install-scripts: ' + JSON.stringify({ ran: ran.length, problems: problems }) + '\n');
      return;
    }
    process.stdout.write(
      'install: ' +
        (first.timedOut ? 'stopped after ' + Math.round(timeoutMs / 1000) + ' s' : 'exit ' + first.code) +
        " with the dependencies' install scripts; again without them, then each one on its own\n",
    );
    const again = await runPassedOn(install + ' ' + scriptsOff, env, 0);
    if (again.code !== 0) {
      process.exitCode = again.code;
      return;
    }
    installed = true;
  }
  const ordered = inDependencyOrder(installedPackages(process.cwd()));
  const problems = await runOneByOne(manager, ordered, env);
  process.stdout.write('install-scripts: ' + JSON.stringify({ ran: ordered.length, problems: problems }) + '\n');
}

main().catch((error) => {
  // The runner's own failure must not hide the install: say so, and report nothing.
  process.stdout.write('install scripts could not be run: ' + (error && error.stack ? error.stack : error) + '\n');
  if (!installed) process.exitCode = 1;
});
