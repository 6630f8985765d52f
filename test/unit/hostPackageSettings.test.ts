import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostPackageSettings } from '../../src/sandbox/environment/imageBuilder.js';

// A machine whose registry CA is named only for pip (pip's config or PIP_CERT), as many company
// machines have it: the build container's npm, pnpm and yarn must trust the same bundle.
test('a CA bundle named for pip is the one Node installers trust in the build container', async () => {
  const saved = { ...process.env };
  try {
    for (const key of ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'])
      delete process.env[key];
    process.env.PIP_CERT = '/etc/ssl/certs/company-ca.pem';
    const env = await hostPackageSettings.env();
    assert.ok(env.includes('PIP_CERT=/etc/ssl/certs/company-ca.pem'), env.join('\n'));
    assert.ok(env.includes('NODE_EXTRA_CA_CERTS=/etc/ssl/certs/company-ca.pem'), env.join('\n'));

    process.env.NODE_EXTRA_CA_CERTS = '/etc/ssl/certs/node-ca.pem';
    const own = await hostPackageSettings.env();
    assert.ok(own.includes('NODE_EXTRA_CA_CERTS=/etc/ssl/certs/node-ca.pem'), 'a bundle named for Node itself wins');
  } finally {
    process.env = saved;
  }
});
