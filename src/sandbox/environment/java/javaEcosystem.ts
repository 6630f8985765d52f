// Java: Maven (pom.xml, its reactor's modules, the maven-wrapper, .java-version and .sdkmanrc), and
// Gradle builds, whose wrapper's distribution this machine may not be able to fetch (gradlePlan.ts).
import type { Ecosystem } from '../ecosystem.js';
import { isGradleManifest, planGradle } from './gradlePlan.js';
import { mavenConfigFiles, mavenReactorProbe, planMaven } from './mavenPlan.js';
import { isProfileMarker, readReactor } from './mavenProject.js';

/** pom.xml at the root and in module folders; not those of test resources or build output. */
function isPom(path: string): boolean {
  return (
    (path === 'pom.xml' || path.endsWith('/pom.xml')) &&
    path.split('/').length <= 5 &&
    !/(^|\/)(src|target|node_modules)\//.test(path)
  );
}

const manifests = new Set(['.java-version', '.sdkmanrc', ...mavenConfigFiles]);

export const javaEcosystem: Ecosystem = {
  kind: 'java',
  isManifest: (path) => isPom(path) || manifests.has(path) || isProfileMarker(path) || isGradleManifest(path),
  plan: ({ manifests: read, chosen }) => {
    const plan = planMaven(read) ?? planGradle(read);
    return plan && (chosen.testCommand ? { ...plan, testCommand: chosen.testCommand } : plan);
  },
  workspaceProbe: (_files, read) => mavenReactorProbe(readReactor(read), true),
};
