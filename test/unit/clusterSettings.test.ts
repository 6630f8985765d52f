// `npm run cluster` and docker-compose.yml are two deployments of one configuration: the same
// versions, the same configuration files, the same setup script and search attributes. These
// tests read both, so that a change to one that the other lacks fails here.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { searchAttributeArguments, temporalServerEnvironment } from '../../deploy/cluster/clusterLauncher.js';
import {
  clusterAddresses,
  clusterConfigFiles,
  clusterDatabaseUrl,
  clusterPassword,
  clusterPaths,
  clusterVersions,
  newClusterPassword,
} from '../../deploy/cluster/clusterSettings.js';
import { projectRoot } from '../../src/config.js';

const compose = readFileSync(join(projectRoot, 'docker-compose.yml'), 'utf8');
const serverConfig = readFileSync(join(projectRoot, clusterConfigFiles.temporalServer), 'utf8');

/** The image tags of a repository named in the compose file. */
function tagsOf(repository: string): string[] {
  return [...compose.matchAll(new RegExp(`^\\s*image:\\s*${repository.replace('/', '\\/')}:(\\S+)\\s*$`, 'gm'))].map(
    (match) => match[1] as string,
  );
}

test('docker-compose.yml runs the versions that npm run cluster builds', () => {
  assert.deepEqual(tagsOf('temporalio/server'), [clusterVersions.temporalServer]);
  // The schema tool and the CLI of the setup services: the server's release.
  assert.deepEqual([...new Set(tagsOf('temporalio/admin-tools'))], [clusterVersions.temporalServer]);
  assert.deepEqual(tagsOf('temporalio/ui'), [clusterVersions.uiServer]);
  assert.deepEqual(tagsOf('postgres'), [clusterVersions.postgresql]);
});

test('docker-compose.yml mounts our configuration files and setup script, and each one exists', () => {
  for (const file of Object.values(clusterConfigFiles)) {
    assert.ok(existsSync(join(projectRoot, file)), `${file} exists`);
    assert.match(compose, new RegExp(`- \\./${file.replace(/\./g, '\\.')}:`), `docker-compose.yml mounts ./${file}`);
  }
  // The server image loads our config file; the UI image its config/docker.yaml.
  assert.match(compose, /TEMPORAL_SERVER_CONFIG_FILE_PATH: \/etc\/temporal\/config\/durable-debugger\.yaml/);
  assert.match(compose, /- \.\/deploy\/temporal\/server\.yaml:\/etc\/temporal\/config\/durable-debugger\.yaml:ro/);
  assert.match(compose, /- \.\/deploy\/temporal\/ui-server\.yaml:\/home\/ui-server\/config\/docker\.yaml:ro/);
  // The dynamic config is mounted where the server config's default path points.
  const dynamicConfigDefault = /default "([^"]+)" \(env "DYNAMIC_CONFIG_FILE_PATH"\)/.exec(serverConfig)?.[1];
  assert.ok(dynamicConfigDefault, 'deploy/temporal/server.yaml reads DYNAMIC_CONFIG_FILE_PATH with a default');
  assert.ok(
    compose.includes(`- ./deploy/temporal/dynamicconfig.yaml:${dynamicConfigDefault}:ro`),
    `mounted at ${dynamicConfigDefault}`,
  );
});

test('docker-compose.yml registers the search attributes of src/temporal/searchAttributes.ts', () => {
  const setupCall = /temporal-setup\.sh\s*\n\s*- namespace\s*\n((?:\s*- \S+=\S+\s*\n)+)/.exec(compose);
  assert.ok(setupCall, 'the temporal-namespace service runs deploy/temporal/temporal-setup.sh namespace Name=Type …');
  const listed = [...(setupCall[1] as string).matchAll(/- (\S+=\S+)/g)].map((match) => match[1]);
  assert.deepEqual(listed, searchAttributeArguments());
});

test('every variable npm run cluster sets for the Temporal server is read by deploy/temporal/server.yaml', () => {
  for (const name of Object.keys(temporalServerEnvironment('a password'))) {
    assert.ok(serverConfig.includes(`(env "${name}")`), `deploy/temporal/server.yaml reads ${name}`);
  }
  assert.match(serverConfig.split('\n')[0] as string, /^# enable-template$/, 'templating is on (the first line)');
});

test('docker-compose.yml publishes the Temporal frontend and the Web UI on 127.0.0.1 only', () => {
  const published = [...compose.matchAll(/^\s*ports:\s*\n((?:\s*(?:#.*|- .*)\n)+)/gm)].flatMap((match) =>
    [...(match[1] as string).matchAll(/^\s*- "?([^"\n]+)"?\s*$/gm)].map((port) => port[1] as string),
  );
  assert.deepEqual(published.sort(), ['127.0.0.1:7233:7233', '127.0.0.1:8233:8080']);
});

test('no fixed database password: docker-compose.yml takes POSTGRES_PASSWORD, with no default, and server.yaml has none', () => {
  const passwords = [...compose.matchAll(/^\s*(POSTGRES_PASSWORD|SQL_PASSWORD|POSTGRES_PWD):\s*(.*)$/gm)];
  assert.deepEqual(
    passwords.map((match) => match[1]),
    ['POSTGRES_PASSWORD', 'SQL_PASSWORD', 'POSTGRES_PWD'],
  );
  for (const match of passwords)
    assert.match(match[2] as string, /^\$\{POSTGRES_PASSWORD:\?set POSTGRES_PASSWORD [^}]+\}$/);
  assert.doesNotMatch(serverConfig, /default "[^"]*" \(env "POSTGRES_PWD"\)/);
});

test('docker compose refuses to start without POSTGRES_PASSWORD, saying what to set', (t) => {
  const compose = ['docker-compose', 'docker'].find(
    (command) => spawnSync(command, command === 'docker' ? ['compose', 'version'] : ['version']).status === 0,
  );
  if (!compose) return t.skip('neither `docker compose` nor docker-compose is installed');
  const config = (env: NodeJS.ProcessEnv) =>
    spawnSync(compose, [...(compose === 'docker' ? ['compose'] : []), 'config'], {
      cwd: projectRoot,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, ...env },
    });
  const unset = config({});
  assert.notEqual(unset.status, 0);
  assert.match(unset.stderr, /set POSTGRES_PASSWORD to a password of your own/);
  const set = config({ POSTGRES_PASSWORD: 'a-password-of-ours' });
  assert.equal(set.status, 0, set.stderr);
  assert.equal(set.stdout.match(/a-password-of-ours/g)?.length, 3);
  assert.match(set.stdout, /127\.0\.0\.1:7233:7233/);
});

test('npm run cluster: each cluster gets a password of its own, in a file only its owner reads, never in what is shown', () => {
  const homes = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'cluster-password-')));
  try {
    const paths = homes.map((home) => clusterPaths({ DURABLE_DEBUGGER_CLUSTER_HOME: home }));
    assert.throws(
      () => clusterPassword(paths[0]),
      /The cluster has no password file \(.*\): start it with `npm run cluster`/,
    );
    const passwords = paths.map((each) => newClusterPassword(each));
    assert.notEqual(passwords[0], passwords[1]);
    for (const [index, password] of passwords.entries()) {
      assert.match(password, /^[A-Za-z0-9_-]{32}$/, '192 random bits, safe in a URL');
      assert.equal(clusterPassword(paths[index]), password);
      assert.equal(statSync(paths[index]!.passwordFile).mode & 0o777, 0o600);
    }
    assert.ok(clusterDatabaseUrl(paths[0]).includes(`:${passwords[0]}@`));
    assert.doesNotMatch(clusterAddresses.postgresqlUrl(), /:[^/@]*@/, 'the URL shown has no password');
    // A new cluster in the same place gets a new password.
    assert.notEqual(newClusterPassword(paths[0]!), passwords[0]);
  } finally {
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  }
});
