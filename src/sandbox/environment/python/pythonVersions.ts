// Which Python a repository allows (`requires-python`, setup.cfg/setup.py `python_requires`,
// Poetry's `python`), and the sandbox images that bring another Python: built from Debian's own
// suites by `durable-debugger setup --python 3.13` (trixie) or `--python 3.9` (bullseye), named after the
// sandbox image with `-python3.X` added to its tag.
import pep440 from '@renovatebot/pep440';
import { excerpt } from '../excerpt.js';

/** The Pythons a sandbox image can be built with, from Debian suites on the Debian mirror (newest first). */
export const debianPythons = [
  { minor: '3.13', version: '3.13.5', suite: 'trixie' },
  { minor: '3.11', version: '3.11.2', suite: 'bookworm' },
  { minor: '3.9', version: '3.9.2', suite: 'bullseye' },
] as const;

/** The sandbox image that brings Python `minor` (e.g. durable-debugger-sandbox:1 → durable-debugger-sandbox:1-python3.13). */
export function pythonVariantImage(sandboxImage: string, minor: string): string {
  return `${sandboxImage}${sandboxImage.includes(':') ? '' : ':latest'}-python${minor}`;
}

/** Poetry's `^3.9` and `~3.9` as PEP 440 (`>=3.9,<4.0`, `>=3.9,<3.10`); PEP 440 text as it is. */
export function asPep440(specifier: string): string {
  return specifier
    .split(',')
    .map((part) => {
      const trimmed = part.trim();
      const caret = trimmed.match(/^\^(\d+)(?:\.(\d+))?/);
      if (caret) return `>=${caret[1]}.${caret[2] ?? 0},<${Number(caret[1]) + 1}.0`;
      const tilde = trimmed.match(/^~(\d+)\.(\d+)/);
      if (tilde && !trimmed.startsWith('~=')) return `>=${tilde[1]}.${tilde[2]},<${tilde[1]}.${Number(tilde[2]) + 1}`;
      return trimmed === '*' ? '' : trimmed;
    })
    .filter(Boolean)
    .join(',');
}

/** Whether the Python `version` ("3.11.2") satisfies the specifier; null when the specifier cannot be read. */
export function allowsPython(specifier: string, version: string): boolean | null {
  const range = asPep440(specifier);
  if (!range) return true;
  if (!pep440.validRange(range)) return null;
  return pep440.satisfies(version, range);
}

/** What to do when the repository's Python is not the sandbox's: which image to build, or to bring one. */
export function explainPythonMismatch(
  requirement: { specifier: string; source: string },
  sandbox: { image: string; version: string },
): string {
  const said = `${requirement.source} requires Python ${excerpt(requirement.specifier)}, which excludes the sandbox's Python ${sandbox.version} (${sandbox.image}).`;
  const buildable = debianPythons.filter((python) => allowsPython(requirement.specifier, python.version));
  const bring =
    'or name an image that has such a Python (and sh, coreutils and your test runner) in durable-debugger.json ("image", with "setup" commands to install the dependencies) or build one with a durable-debugger.Dockerfile.';
  if (buildable.length === 0)
    return `${said} No Debian suite on the package mirror has a Python it allows (${debianPythons.map((python) => `${python.version} in ${python.suite}`).join(', ')}): ${bring.replace(/^or n/, 'N')}`;
  const best = buildable[0] as (typeof debianPythons)[number];
  return `${said} Build a sandbox image with Python ${best.minor} from Debian ${best.suite}, once, as root: durable-debugger setup --python ${best.minor} (it becomes ${pythonVariantImage(sandbox.image, best.minor)}, and runs that need it use it by themselves); ${bring}`;
}
