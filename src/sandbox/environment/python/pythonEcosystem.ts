// Python: requirements files, pyproject.toml (PEP 621, dependency groups, uv and Poetry locks),
// setup.cfg and setup.py, tox.ini's test deps and tox's dependency groups (tox.ini, tox.toml), and
// pytest's settings (read by the probe).
import type { Ecosystem } from '../ecosystem.js';
import { isRequirementsFile, planPython } from './pythonPlan.js';
import { pythonImportProbe } from './pythonProbes.js';

const manifests = new Set([
  'pyproject.toml',
  'setup.cfg',
  'setup.py',
  'uv.lock',
  'poetry.lock',
  // pytest's settings (its `pythonpath`), read by the environment's probe; what tox and nox install too.
  'pytest.ini',
  '.pytest.ini',
  'tox.ini',
  'tox.toml',
  'noxfile.py',
]);

export const pythonEcosystem: Ecosystem = {
  kind: 'python',
  isManifest: (path) => manifests.has(path) || isRequirementsFile(path),
  plan: ({ files, manifests: read, chosen }) => {
    const plan = planPython(files, read, { extras: chosen.extras, groups: chosen.groups, apt: chosen.apt });
    return plan && { ...plan, testCommand: chosen.testCommand };
  },
  workspaceProbe: (files, read) => pythonImportProbe(files, read, true),
};
