// The Java ecosystem's pure decisions: which JDK a Maven build asks for and gets, the reactor it
// reads, Maven's release from the wrapper, the Gradle wrapper's distribution, and the host's Maven mirrors.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { planEnvironment } from '../../src/sandbox/environment/plan.js';
import { EnvironmentConfigError } from '../../src/sandbox/environment/planTypes.js';
import { javaMajor, satisfiesJavaRange } from '../../src/sandbox/environment/java/javaVersion.js';
import { readReactor } from '../../src/sandbox/environment/java/mavenProject.js';
import { wrapperMavenVersion } from '../../src/sandbox/environment/java/mavenPlan.js';
import { gradleDistribution } from '../../src/sandbox/environment/java/gradlePlan.js';
import { javaEcosystem } from '../../src/sandbox/environment/java/javaEcosystem.js';
import {
  buildMavenSettingsXml,
  mavenRepositoryUrls,
  parseMavenSettings,
} from '../../src/sandbox/environment/java/mavenSettings.js';

const fixtures = join(import.meta.dirname, '..', '..', 'fixtures');
const read = (fixture: string, ...paths: string[]) =>
  Object.fromEntries(paths.map((path) => [path, readFileSync(join(fixtures, fixture, path), 'utf8')]));

const pom = (properties: string, build = '') =>
  `<project><modelVersion>4.0.0</modelVersion><groupId>g</groupId><artifactId>a</artifactId><version>1</version><properties>${properties}</properties>${build}</project>`;

test('Java versions as files write them', () => {
  assert.equal(javaMajor('1.8'), 8);
  assert.equal(javaMajor('17'), 17);
  assert.equal(javaMajor('17.0.9-tem'), 17);
  assert.equal(javaMajor('temurin-21.0.2'), 21);
  assert.equal(javaMajor('1.8.0_292'), 8);
  assert.equal(satisfiesJavaRange('[17,)', 17), true);
  assert.equal(satisfiesJavaRange('[1.8,)', 17), true);
  assert.equal(satisfiesJavaRange('[21,)', 17), false);
  assert.equal(satisfiesJavaRange('[1.8,17)', 17), false);
  assert.equal(satisfiesJavaRange('17', 17), true);
  assert.equal(satisfiesJavaRange('21', 17), false);
});

test('a reactor: every module its <modules> name, the JDK from a property, the sibling from the workspace', () => {
  const manifests = read('51_java_maven_reactor_ledger', 'pom.xml', 'ledger-core/pom.xml', 'ledger-report/pom.xml');
  const reactor = readReactor(manifests);
  assert.deepEqual(
    reactor.map((module) => [module.folder, module.artifactId, module.packaging]),
    [
      ['', 'ledger-parent', 'pom'],
      ['ledger-core', 'ledger-core', 'jar'],
      ['ledger-report', 'ledger-report', 'jar'],
    ],
  );
  const plan = planEnvironment(Object.keys(manifests), manifests);
  assert.equal(plan?.kind, 'java');
  assert.deepEqual(plan?.installers, ['maven']);
  // The JDK (apt) and Maven come in a toolchain image every Java repository of this Maven release shares.
  assert.deepEqual(plan?.basePlan?.installers, ['apt', 'maven']);
  assert.match(plan?.basePlan?.description ?? '', /openjdk 17 \(apt openjdk-17-jdk-headless\), maven 3\.9\.11/);
  assert.match(
    plan?.toolchainNotes?.[0] ?? '',
    /^openjdk 17 \(Debian bookworm's JDK; the build asks for Java 11: pom\.xml maven\.compiler\.release 11/,
  );
  assert.match(
    plan?.testCommand ?? '',
    /surefire-reports\.py mvn -B -o -fae -Dmaven\.test\.failure\.ignore=true test$/,
  );
  // The build's test run reads the warm-up classes: the checks of license headers and style skip them
  // there (Apache RAT failed commons-lang3's build on them); the sandbox's own run keeps them.
  assert.match(plan?.script ?? '', /-fae test [^\n]*-Drat\.skip=true -Dlicense\.skip=true -Dcheckstyle\.skip=true/);
  assert.doesNotMatch(plan?.testCommand ?? '', /skip/);
  // commons-parent's profile markers are manifests, copied empty into the build: their profiles' plugins are resolved.
  const marked = { ...manifests, 'ledger-core/src/site/resources/profile.jacoco': '' };
  assert.equal(
    planEnvironment(Object.keys(marked), marked)?.files['project/ledger-core/src/site/resources/profile.jacoco'],
    '',
  );
  assert.ok(javaEcosystem.isManifest('src/site/resources/profile.japicmp'));
  assert.ok(!javaEcosystem.isManifest('src/site/resources/logo.png'));
  // The build copies the three pom.xml files and nothing of the code.
  assert.deepEqual(Object.keys(plan?.files ?? {}).sort(), [
    'project/ledger-core/pom.xml',
    'project/ledger-report/pom.xml',
    'project/pom.xml',
  ]);
  // A copy of a module from the registry is removed in the build and refused by the probe.
  // Only the reactor's own version: another release may be a plugin's dependency (commons-lang3 3.8.1 for the enforcer).
  assert.match(
    plan?.script ?? '',
    /\[ -d \/opt\/maven-repository\/'org\/example\/ledger\/ledger-core\/2\.4\.0-SNAPSHOT' \]; then echo "maven: removing org\.example\.ledger:ledger-core:2\.4\.0-SNAPSHOT, pulled from the registry/,
  );
  assert.match(
    plan?.probes[0]?.script ?? '',
    /"\$repository"\/'org\/example\/ledger\/ledger-core\/2\.4\.0-SNAPSHOT' \]/,
  );
  // A CI-friendly ${revision} is read from the properties; a version that cannot be read means every version.
  const revised = Object.fromEntries(
    Object.entries(manifests).map(([path, text]) => [
      path,
      text
        .replace('<version>2.4.0-SNAPSHOT</version>', '<version>${revision}</version>')
        .replace('<properties>', '<properties>\n    <revision>2.5.0</revision>'),
    ]),
  );
  assert.match(
    planEnvironment(Object.keys(revised), revised)?.script ?? '',
    /removing org\.example\.ledger:ledger-parent:2\.5\.0,/,
  );
  const unread = {
    ...manifests,
    'pom.xml': (manifests['pom.xml'] ?? '').replace(
      '<version>2.4.0-SNAPSHOT</version>',
      '<version>${nowhere}</version>',
    ),
  };
  assert.match(
    planEnvironment(Object.keys(unread), unread)?.script ?? '',
    /\[ -d \/opt\/maven-repository\/'org\/example\/ledger\/ledger-parent' \]/,
  );
});

test('Maven from the wrapper, else the default; JDK asks from the enforcer and .java-version', () => {
  const slug = read('50_java_maven_junit5_slug', 'pom.xml', '.mvn/wrapper/maven-wrapper.properties');
  assert.equal(wrapperMavenVersion(slug['.mvn/wrapper/maven-wrapper.properties']), '3.9.11');
  const plan = planEnvironment(Object.keys(slug), slug);
  assert.match(plan?.toolchainNotes?.[1] ?? '', /^maven 3\.9\.11 \(the wrapper's distributionUrl/);
  const stats = read('52_java_compile_error_stats', 'pom.xml', '.java-version');
  assert.match(planEnvironment(Object.keys(stats), stats)?.toolchainNotes?.join(' ') ?? '', /\.java-version 17/);
});

test('Java 18 to 21 gets trixie’s OpenJDK 21 on the sandbox image’s trixie variant; 17 and older, bookworm’s 17', () => {
  const java21 = planEnvironment(['pom.xml'], {
    'pom.xml': pom('<maven.compiler.release>21</maven.compiler.release>'),
  });
  assert.equal(java21?.basePlan?.debianSuite, 'trixie');
  assert.match(java21?.basePlan?.script ?? '', /openjdk-21-jdk-headless/);
  assert.match(java21?.basePlan?.description ?? '', /openjdk 21 \(apt openjdk-21-jdk-headless, trixie\)/);
  assert.match(
    java21?.toolchainNotes?.[0] ?? '',
    /^openjdk 21 \(Debian trixie's JDK, on the sandbox image's trixie variant; the build asks for Java 21: pom\.xml maven\.compiler\.release 21/,
  );
  const java17 = planEnvironment(['pom.xml'], {
    'pom.xml': pom('<maven.compiler.release>17</maven.compiler.release>'),
  });
  assert.equal(java17?.basePlan?.debianSuite, undefined);
  assert.match(java17?.basePlan?.script ?? '', /openjdk-17-jdk-headless/);
  // An enforcer rule that only 21 meets picks 21 too, whatever the release.
  const enforced = planEnvironment(['pom.xml'], {
    'pom.xml': pom(
      '<maven.compiler.release>17</maven.compiler.release>',
      '<build><plugins><plugin><artifactId>maven-enforcer-plugin</artifactId><executions><execution><configuration><rules><requireJavaVersion><version>[21,)</version></requireJavaVersion></rules></configuration></execution></executions></plugin></plugins></build>',
    ),
  });
  assert.equal(enforced?.basePlan?.debianSuite, 'trixie');
});

test('a build that asks for a Java no JDK here can build ends with a config error that names the file', () => {
  const newer = { 'pom.xml': pom('<maven.compiler.release>25</maven.compiler.release>') };
  assert.throws(
    () => planEnvironment(['pom.xml'], newer),
    (error) =>
      error instanceof EnvironmentConfigError &&
      /Java 25 \(pom\.xml maven\.compiler\.release 25\).*OpenJDK 17.*OpenJDK 21.*Lower the release to 21/.test(
        error.message,
      ),
  );
  const enforcer = {
    'pom.xml': pom(
      '',
      '<build><plugins><plugin><artifactId>maven-enforcer-plugin</artifactId><executions><execution><configuration><rules><requireJavaVersion><version>[22,)</version></requireJavaVersion></rules></configuration></execution></executions></plugin></plugins></build>',
    ),
  };
  assert.throws(() => planEnvironment(['pom.xml'], enforcer), /maven-enforcer-plugin requires Java \[22,\)/);
  const old = { 'pom.xml': pom('<maven.compiler.source>1.6</maven.compiler.source>') };
  assert.throws(() => planEnvironment(['pom.xml'], old), /they compile for Java 7 and newer only/);
});

test('Gradle: the wrapper’s distribution, as a toolchain the host must find', () => {
  const manifests = read(
    '53_java_gradle_wrapper_unreachable',
    'settings.gradle.kts',
    'build.gradle.kts',
    'gradle/wrapper/gradle-wrapper.properties',
  );
  assert.deepEqual(gradleDistribution(manifests['gradle/wrapper/gradle-wrapper.properties']), {
    url: 'https://services.gradle.org/distributions/gradle-8.10.2-bin.zip',
    name: 'gradle-8.10.2-bin',
    version: '8.10.2',
  });
  const plan = planEnvironment(Object.keys(manifests), manifests);
  assert.equal(plan?.kind, 'java');
  // Looked for with the toolchain image's, before anything is built.
  assert.deepEqual(plan?.basePlan?.toolchains, [
    {
      kind: 'gradle',
      name: 'gradle-8.10.2-bin',
      url: 'https://services.gradle.org/distributions/gradle-8.10.2-bin.zip',
      version: '8.10.2',
    },
  ]);
});

test('the host’s Maven mirrors: the proxy allows them instead of Central, credentials only when passed', () => {
  const settings = parseMavenSettings(
    `<settings><mirrors><mirror><id>corp</id><url>https://maven.corp.example/repository/central/</url><mirrorOf>central</mirrorOf></mirror></mirrors>
     <servers><server><id>corp</id><username>ci</username><password>\${env.CORP_TOKEN}</password></server><server><id>other</id><password>x</password></server></servers></settings>`,
    { CORP_TOKEN: 's3cret-token' },
  );
  assert.deepEqual(mavenRepositoryUrls(settings), ['https://maven.corp.example/repository/central/']);
  assert.deepEqual(Object.keys(settings.servers), ['corp']);
  const withCredentials = buildMavenSettingsXml(settings, 'http://127.0.0.1:3128', true);
  assert.match(withCredentials, /<password>s3cret-token<\/password>/);
  assert.match(withCredentials, /<protocol>https<\/protocol><host>127\.0\.0\.1<\/host><port>3128<\/port>/);
  assert.doesNotMatch(buildMavenSettingsXml(settings, null, false), /s3cret-token|<proxies>/);
  assert.deepEqual(mavenRepositoryUrls(parseMavenSettings('<settings/>')), [
    'https://repo.maven.apache.org/maven2',
    'https://repo1.maven.org/maven2',
  ]);
});
