// A hostile npm install script: the attempts of probe.py, from Node (see there).
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');

const testCase = process.argv[2];
const targets = JSON.parse(fs.readFileSync(path.join(__dirname, 'targets.json'), 'utf8'));
const results = [];

function record(attempt, reached, detail) {
  results.push({ attempt, reached, detail: String(detail).slice(0, 300) });
  console.log(`probe ${testCase}: ${attempt}: ${reached ? 'REACHED' : 'blocked'} (${detail})`);
}

function split(target) {
  const at = target.lastIndexOf(':');
  return { host: target.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(target.slice(at + 1)) };
}

function connect(attempt, target) {
  return new Promise((resolve) => {
    const socket = net.connect({ ...split(target), timeout: 5000 });
    socket.once('connect', () => (record(attempt, true, 'connected'), socket.destroy(), resolve()));
    socket.once('timeout', () => (record(attempt, false, 'timed out'), socket.destroy(), resolve()));
    socket.once('error', (error) => (record(attempt, false, error.message), resolve()));
  });
}

function throughProxy(attempt, target) {
  const proxy = process.env.HTTPS_PROXY || process.env.https_proxy || process.env.npm_config_https_proxy;
  if (!proxy) return Promise.resolve(record(attempt, false, 'no proxy variable'));
  return new Promise((resolve) => {
    const socket = net.connect({ ...split(proxy.split('://').pop().replace(/\/$/, '')), timeout: 5000 });
    socket.once('connect', () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    socket.once('data', (chunk) => {
      const status = chunk.toString().split('\r\n')[0];
      record(attempt, / 200 /.test(`${status} `), status);
      socket.destroy();
      resolve();
    });
    socket.once('timeout', () => (record(attempt, false, 'timed out'), socket.destroy(), resolve()));
    socket.once('error', (error) => (record(attempt, false, error.message), resolve()));
  });
}

function read(attempt, file) {
  try {
    record(attempt, true, fs.readFileSync(file.replace(/^~/, os.homedir()), 'utf8').slice(0, 200));
  } catch (error) {
    record(attempt, false, error.message);
  }
}

(async () => {
  await connect("the Temporal server's port", targets.temporal);
  await connect('PostgreSQL', targets.postgres);
  await connect("PostgreSQL's default port", '127.0.0.1:5432');
  await connect('a host that is no registry', targets.nonRegistry);
  await throughProxy("the Temporal server's port through the proxy", targets.temporal);
  await throughProxy('PostgreSQL through the proxy', targets.postgres);
  await throughProxy('a host that is no registry through the proxy', targets.nonRegistry);
  read('~/.npmrc', '~/.npmrc');
  read('/root/.npmrc', '/root/.npmrc');
  read("the host's npmrc", targets.hostNpmrc);
  const canaries = targets.canaries.map((canary) => Buffer.from(canary, 'base64').toString());
  const leaked = Object.entries(process.env)
    .filter(([, value]) => canaries.some((canary) => value.includes(canary)))
    .map(([name]) => name);
  record('credential variables', leaked.length > 0, leaked.join(', ') || "none of the worker's");
  const status = Object.fromEntries(
    fs
      .readFileSync('/proc/self/status', 'utf8')
      .split('\n')
      .filter((line) => line.includes(':\t'))
      .map((line) => line.split(':\t').map((part) => part.trim())),
  );
  // Root may own, chown and write its files (CHOWN, DAC_OVERRIDE, FOWNER), nothing more; no setuid binary raises it.
  const extra = BigInt(`0x${status.CapEff}`) & ~0b1011n;
  record('privileges beyond owning files', extra !== 0n || status.NoNewPrivs !== '1', `CapEff=${status.CapEff} NoNewPrivs=${status.NoNewPrivs}`);
  await throughProxy('the package registry through the proxy', targets.registry);
  fs.mkdirSync('/hostile-probes', { recursive: true });
  fs.writeFileSync(`/hostile-probes/${testCase}.json`, JSON.stringify(results, null, 2));
})();
