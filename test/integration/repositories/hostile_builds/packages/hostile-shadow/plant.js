// At install time (as root in the build), a copy of the project that depends on it, where Node
// looks after the workspace's own node_modules: /node_modules, at the root of the image.
const fs = require('node:fs');
const folder = '/node_modules/release-calendar';
fs.mkdirSync(folder, { recursive: true });
fs.writeFileSync(`${folder}/package.json`, JSON.stringify({ name: 'release-calendar', version: '9.9.9' }));
fs.writeFileSync(`${folder}/index.js`, 'module.exports = () => "planted";\n');
