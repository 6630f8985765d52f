// Gradle builds: the wrapper (gradle/wrapper/gradle-wrapper.properties) downloads its distribution
// from services.gradle.org, which is no package registry: builds cannot reach it. The distribution
// is looked for on the host (gradleDistribution.ts): in this user's Gradle cache, where the wrapper
// left it, or fetched where that host is reachable; otherwise the environment ends saying exactly that.
import type { EnvironmentPlan } from '../planTypes.js';
import { chooseJdk, requestedJava } from './javaVersion.js';
import { javaToolchainPlan } from './mavenPlan.js';
import { surefireTestCommand } from './surefireReports.js';

export const gradleWrapperProperties = 'gradle/wrapper/gradle-wrapper.properties';
const gradleFiles = new Set([
  'build.gradle',
  'build.gradle.kts',
  'settings.gradle',
  'settings.gradle.kts',
  'gradle.properties',
  gradleWrapperProperties,
]);

export function isGradleManifest(path: string): boolean {
  return gradleFiles.has(path);
}

/** The wrapper's distribution: its URL and the name the wrapper keeps it under (gradle-8.10.2-bin). */
export function gradleDistribution(
  properties: string | undefined,
): { url: string; name: string; version: string } | null {
  const url = properties?.match(/^\s*distributionUrl\s*[=:]\s*(\S+)/m)?.[1]?.replace(/\\:/g, ':');
  const file = url?.split('/').pop();
  const match = file?.match(/^(gradle-(\d+(?:\.\d+)*(?:-[\w.]+)?)-(?:bin|all))\.zip$/);
  if (!url || !match) return null;
  return { url, name: match[1] as string, version: match[2] as string };
}

export const gradleUserHome = '/opt/gradle-home';

export function planGradle(manifests: Record<string, string>): EnvironmentPlan | null {
  if (
    !['build.gradle', 'build.gradle.kts', 'settings.gradle', 'settings.gradle.kts'].some(
      (f) => manifests[f] !== undefined,
    )
  )
    return null;
  const distribution = gradleDistribution(manifests[gradleWrapperProperties]);
  const { jdk, note: jdkNote } = chooseJdk(requestedJava(manifests, []), []);
  const gradle = `/opt/gradle/bin/gradle --no-daemon --console=plain`;
  return {
    kind: 'java',
    installers: ['maven'],
    basePlan: javaToolchainPlan(
      jdk,
      null,
      distribution
        ? { kind: 'gradle', name: distribution.name, url: distribution.url, version: distribution.version }
        : { kind: 'gradle', name: '', url: '', version: '' },
    ),
    description: `java · gradle ${distribution ? distribution.version : '(no wrapper)'} testClasses, gradle --offline test in the sandbox`,
    files: {},
    script: [
      'set -e',
      // Gradle reads no HTTPS_PROXY: the proxy as Java's own properties; dependencies from the registries only.
      'proxy="${HTTPS_PROXY#http://}"',
      `export GRADLE_USER_HOME=${gradleUserHome} JAVA_TOOL_OPTIONS="-Dhttps.proxyHost=\${proxy%:*} -Dhttps.proxyPort=\${proxy##*:} -Dhttp.proxyHost=\${proxy%:*} -Dhttp.proxyPort=\${proxy##*:}"`,
      `cd /workspace && ${gradle} testClasses`,
      `chmod -R a+rX ${gradleUserHome}`,
      `echo "packages: $(find ${gradleUserHome}/caches/modules-2/files-2.1 -name '*.jar' 2>/dev/null | wc -l)"`,
    ].join('\n'),
    needsRepository: true,
    toolchains: [],
    testCommand: surefireTestCommand(
      `sh -c 'rm -rf /tmp/gradle-home && cp -a ${gradleUserHome} /tmp/gradle-home && exec ${gradle} --offline -g /tmp/gradle-home test --continue'`,
    ),
    build: [],
    containerEnv: [],
    toolchainNotes: [jdkNote],
    probes: [],
  };
}
