// The production-shaped deployment cannot be started here (its images cannot be pulled), so
// its compose file is validated by docker-compose itself, and its shape is checked. The same
// configuration runs for real with `npm run cluster` (test/cluster/).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/config.js';

test('docker-compose.yml is valid and runs Temporal on PostgreSQL, its UI, and worker replicas on the host engine', () => {
  const config = execFileSync('docker-compose', ['-f', join(projectRoot, 'docker-compose.yml'), 'config'], {
    encoding: 'utf8',
    // The deployment takes its database password from the environment (it has no default).
    env: { ...process.env, ANTHROPIC_API_KEY: '', POSTGRES_PASSWORD: 'a-password-of-the-test' },
  });
  for (const service of [
    'postgresql:',
    'temporal-schema:',
    'temporal:',
    'temporal-namespace:',
    'temporal-ui:',
    'worker:',
    'sandbox-image:',
  ]) {
    assert.ok(config.includes(`  ${service}`), `service ${service}`);
  }
  // Temporal on PostgreSQL: the schema tool's plugin and our server config (persistence and visibility on postgres12).
  assert.match(config, /SQL_PLUGIN: postgres12/);
  assert.match(config, /TEMPORAL_SERVER_CONFIG_FILE_PATH: \/etc\/temporal\/config\/durable-debugger\.yaml/);
  assert.match(config, /TEMPORAL_ADDRESS: temporal:7233/);
  assert.match(config, /\/var\/run\/docker\.sock:\/var\/run\/docker\.sock/);
  assert.match(config, /replicas: 2/);
  // The data folder keeps its path inside the workers: sandboxes bind-mount workspace folders by host path.
  assert.match(config, /\/var\/lib\/durable-debugger:\/var\/lib\/durable-debugger/);
  // Workers debug only repositories under REPOS_DIR.
  assert.match(config, /DURABLE_DEBUGGER_REPO_ROOTS: \/srv\/repos/);
  const dockerfile = readFileSync(join(projectRoot, 'deploy', 'worker.Dockerfile'), 'utf8');
  assert.match(dockerfile, /CMD \["worker"\]/);
});
