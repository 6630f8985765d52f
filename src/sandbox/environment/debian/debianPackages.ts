// Debian packages installed in a build (installer 'apt'): names checked against Debian's own
// grammar, and the build-script fragment that installs them from Debian's archive through the
// registry proxy. Debian's archive is a package registry here like PyPI or npm's: the build
// reaches the host's configured Debian mirror (debianMirrors.ts) and nothing else.
import { EnvironmentConfigError, repositoryConfigFile, type EnvironmentPlan } from '../planTypes.js';
import { aptMirrorVariables, defaultDebianMirrors } from './debianMirrors.js';

/**
 * Debian Policy 5.6.7: lower case letters, digits, `+`, `-` and `.`, at least two characters,
 * starting with a letter or digit; optionally `=version` (Policy 5.6.12). Never an option of apt's.
 */
const packageName = /^[a-z0-9][a-z0-9+.-]+$/;
const packageVersion = /^[0-9][A-Za-z0-9.+~:-]*$/;

/** At most this many packages a repository may name: a list longer than any real build's is a mistake. */
export const maxAptPackages = 200;

/** Null when `spec` is a Debian package name (with an optional `=version`), else why not. */
export function aptPackageProblem(spec: string): string | null {
  const [name, version, ...rest] = spec.split('=');
  if (rest.length) return `"${spec}" has more than one "="`;
  if (!name || !packageName.test(name))
    return `"${spec}" is not a Debian package name (lower case letters, digits, + - and ., at least two, starting with a letter or digit)`;
  if (version !== undefined && !packageVersion.test(version)) return `"${spec}" names no Debian version after "="`;
  return null;
}

/** The packages `where` names, checked: an EnvironmentConfigError that says which one is wrong. */
export function checkedAptPackages(value: unknown, where: string): string[] {
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string'))
    throw new EnvironmentConfigError(`${where} must be a list of Debian package names, such as ["libssl-dev"]`);
  const names = value.map((name: string) => name.trim());
  const problem = names.map(aptPackageProblem).find((found) => found !== null);
  if (problem) throw new EnvironmentConfigError(`${where}: ${problem}`);
  if (names.length > maxAptPackages)
    throw new EnvironmentConfigError(`${where} names ${names.length} packages; at most ${maxAptPackages}`);
  return [...new Set(names)];
}

/**
 * The build-script fragment that installs `packages` with apt, as root: the image's own Debian
 * release (/etc/os-release) from the host's mirror (or deb.debian.org) and its security archive,
 * `apt-get update` then `install --no-install-recommends`, and the package lists and downloaded
 * archives removed so the image keeps neither. apt's settings (the proxy, no privilege drop: a build
 * has no CAP_SETUID) come from buildSettings' apt.conf (APT_CONFIG). Empty for no packages.
 */
export function aptInstallScript(packages: readonly string[]): string {
  if (packages.length === 0) return '';
  const problem = packages.map(aptPackageProblem).find((found) => found !== null);
  if (problem) throw new EnvironmentConfigError(`apt: ${problem}`);
  const list = '/tmp/durable-debugger-apt.list';
  const apt = `apt-get -q -o Dir::Etc::SourceList=${list} -o Dir::Etc::SourceParts=/nonexistent`;
  const { main, security } = aptMirrorVariables;
  return [
    'if ! command -v apt-get >/dev/null 2>&1; then echo "apt: this image has no apt-get (it is not Debian): cannot install ' +
      packages.join(' ') +
      '"; exit 1; fi',
    '. /etc/os-release',
    'if [ -z "${VERSION_CODENAME:-}" ]; then echo "apt: /etc/os-release names no Debian release (VERSION_CODENAME)"; exit 1; fi',
    `printf 'deb %s %s main\\ndeb %s %s-updates main\\ndeb %s %s-security main\\n' "\${${main}:-${defaultDebianMirrors.main}}" "$VERSION_CODENAME" "\${${main}:-${defaultDebianMirrors.main}}" "$VERSION_CODENAME" "\${${security}:-${defaultDebianMirrors.security}}" "$VERSION_CODENAME" > ${list}`,
    'export DEBIAN_FRONTEND=noninteractive',
    `echo "apt: installing ${packages.join(' ')} from Debian $VERSION_CODENAME"`,
    `${apt} update`,
    `${apt} install -y --no-install-recommends ${packages.join(' ')}`,
    `rm -rf ${list} /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /var/cache/apt/*.bin`,
  ].join('\n');
}

/**
 * A plan with Debian packages installed first (durable-debugger.json `apt`): the fragment ahead of
 * its script, apt among its installers, the packages in its description. A plan that installs
 * packages with apt already (a C/C++ toolchain) has named them itself.
 */
export function withAptPackages(plan: EnvironmentPlan, packages: readonly string[]): EnvironmentPlan {
  if (packages.length === 0 || plan.installers?.includes('apt')) return plan;
  if (plan.kind === 'image' || plan.kind === 'dockerfile')
    throw new EnvironmentConfigError(
      `${repositoryConfigFile}: apt installs Debian packages in a build; an ${plan.kind === 'image' ? 'image' : 'own Dockerfile'} is used as it is (install them there, or use setup commands with the image)`,
    );
  return {
    ...plan,
    description: `${plan.description} · apt ${packages.join(' ')}`,
    script: `${aptInstallScript(packages)}\n${plan.script}`,
    installers: [...(plan.installers ?? []), 'apt'],
  };
}
