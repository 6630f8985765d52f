// `npm run cluster` and docker-compose.yml are two deployments of one configuration: the same
// versions, the same configuration files, the same setup script and search attributes. These
// tests read both, so that a change to one that the other lacks fails here.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { searchAttributeArguments, temporalServerEnvironment } from '../../deploy/cluster/clusterLauncher.js';
import { clusterConfigFiles, clusterVersions } from '../../deploy/cluster/clusterSettings.js';
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
  for (const name of Object.keys(temporalServerEnvironment())) {
    assert.ok(serverConfig.includes(`(env "${name}")`), `deploy/temporal/server.yaml reads ${name}`);
  }
  assert.match(serverConfig.split('\n')[0] as string, /^# enable-template$/, 'templating is on (the first line)');
});
