// Where the tool keeps its files (issue 25): the XDG base directories, each overridable, and
// nothing under the package's own folder (an installed package's folder may belong to root).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig, projectRoot } from '../../src/config.js';

const home = '/home/ada';

test('data, tools, toolchains and the config file follow the XDG defaults under $HOME', () => {
  const config = loadConfig({ HOME: home, DURABLE_DEBUGGER_CONFIG: '/nonexistent/config.json' });
  assert.equal(config.home, '/home/ada/.local/share/durable-debugger');
  assert.deepEqual(config.contentStore, { kind: 'folder', root: '/home/ada/.local/share/durable-debugger/store' });
  assert.match(config.workspaceRoot, /^\/home\/ada\/\.local\/share\/durable-debugger\/workspaces\//);
  assert.equal(config.toolsRoot, '/home/ada/.cache/durable-debugger/tools');
  assert.equal(config.toolchainDir, '/home/ada/.cache/durable-debugger/toolchain');
  assert.equal(loadConfig({ HOME: home }).configFile, '/home/ada/.config/durable-debugger/config.json');
  for (const path of [config.home, config.toolsRoot, config.toolchainDir]) assert.ok(!path.startsWith(projectRoot));
});

test('XDG_DATA_HOME, XDG_CACHE_HOME and XDG_CONFIG_HOME move each; relative ones are ignored, as the spec says', () => {
  const config = loadConfig({
    HOME: home,
    XDG_DATA_HOME: '/data',
    XDG_CACHE_HOME: '/cache',
    XDG_CONFIG_HOME: '/etc/ada',
  });
  assert.equal(config.home, '/data/durable-debugger');
  assert.equal(config.toolsRoot, '/cache/durable-debugger/tools');
  assert.equal(config.toolchainDir, '/cache/durable-debugger/toolchain');
  assert.equal(config.configFile, '/etc/ada/durable-debugger/config.json');
  const relative = loadConfig({ HOME: home, XDG_DATA_HOME: 'data', XDG_CACHE_HOME: 'cache' });
  assert.equal(relative.home, '/home/ada/.local/share/durable-debugger');
  assert.equal(relative.toolsRoot, '/home/ada/.cache/durable-debugger/tools');
});

test('DURABLE_DEBUGGER_HOME, _TOOLS, _TOOLCHAIN and _CONFIG still override', () => {
  const config = loadConfig({
    HOME: home,
    XDG_DATA_HOME: '/data',
    DURABLE_DEBUGGER_HOME: '/srv/dd',
    DURABLE_DEBUGGER_TOOLS: '/opt/dd-tools',
    DURABLE_DEBUGGER_TOOLCHAIN: '/opt/dd-toolchain',
    DURABLE_DEBUGGER_CONFIG: '/srv/dd.json',
  });
  assert.equal(config.home, '/srv/dd');
  assert.equal(config.toolsRoot, '/opt/dd-tools');
  assert.equal(config.toolchainDir, '/opt/dd-toolchain');
  assert.equal(config.configFile, '/srv/dd.json');
});
