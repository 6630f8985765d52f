// The Maven environment: Debian's OpenJDK (apt, in the build), the Maven release the wrapper names
// (else a default 3.9), fetched from Maven Central (or the host's mirror of it) and checked against
// its .sha512, and a local repository at /opt/maven-repository with everything `mvn -o test` needs:
// `dependency:go-offline`, then a `test` run of the reactor's pom.xml files with a warm-up test class
// in each module, which makes Surefire resolve its provider (surefire-junit-platform, junit4, testng)
// as the real run will. The reactor's own modules never come from the registry: a copy a dependency
// pulled in is removed, and the probe checks the image holds none. The tests run offline in the
// sandbox, the repository read-only, and their results come from Surefire's XML reports.
import { aptInstallScript } from '../debian/debianPackages.js';
import type { EnvironmentPlan, EnvironmentProbe, GradleToolchain } from '../planTypes.js';
import { chooseJdk, enforcerRules, requestedJava, type DebianJdk } from './javaVersion.js';
import { mavenVariables, mavenCentral } from './mavenSettings.js';
import { isProfileMarker, pomPath, readReactor, type MavenModule } from './mavenProject.js';
import { surefireScript, surefireTestCommand } from './surefireReports.js';
import { shellQuote } from '../../shellQuote.js';

export const mavenRepository = '/opt/maven-repository';
/** Offline; every module's tests run even when a module they depend on has failing tests (the summary fails the command then). */
export const mavenTestCommand = 'mvn -B -o -fae -Dmaven.test.failure.ignore=true test';
/** Tested here with the fixtures; a repository's wrapper may name another. */
export const defaultMavenVersion = '3.9.11';
const wrapperProperties = '.mvn/wrapper/maven-wrapper.properties';
/** Files of .mvn/ that change how Maven builds: copied into the build with the pom.xml files. */
export const mavenConfigFiles = ['.mvn/maven.config', '.mvn/jvm.config', '.mvn/extensions.xml', wrapperProperties];

/** The Maven release the wrapper's distributionUrl names (…/apache-maven/3.9.9/apache-maven-3.9.9-bin.zip). */
export function wrapperMavenVersion(properties: string | undefined): string | undefined {
  const url = properties?.match(/^\s*distributionUrl\s*[=:]\s*(\S+)/m)?.[1]?.replace(/\\:/g, ':');
  return url?.match(/apache-maven\/(\d+\.\d+\.\d+(?:-[\w.]+)?)\/apache-maven-/)?.[1];
}

/** Fetches and checks the Maven distribution through the proxy (Python's urllib reads HTTPS_PROXY). */
function mavenDistributionScript(version: string): string {
  return [
    `python3 - ${shellQuote(version)} <<'DURABLE_DEBUGGER_MAVEN'`,
    'import hashlib, os, sys, tarfile, time, urllib.error, urllib.request',
    'version = sys.argv[1]',
    // A transfer cut short (IncompleteRead), a reset or a timeout is tried again; a 4xx answer is final.
    'def fetch(url, timeout):',
    '    for attempt in range(3):',
    '        try:',
    '            return urllib.request.urlopen(url, timeout=timeout).read()',
    '        except urllib.error.HTTPError as error:',
    '            if error.code < 500 or attempt == 2: raise',
    '            problem = error',
    '        except Exception as error:',
    '            if attempt == 2: raise',
    '            problem = error',
    '        print(f"maven: {url}: {problem!r}; trying again", flush=True)',
    '        time.sleep(3 * (attempt + 1))',
    `base = os.environ.get(${JSON.stringify(mavenVariables.repository)}) or ${JSON.stringify(mavenCentral[0])}`,
    'url = f"{base.rstrip(\'/\')}/org/apache/maven/apache-maven/{version}/apache-maven-{version}-bin.tar.gz"',
    'data = fetch(url, 120)',
    'expected = fetch(url + ".sha512", 60).decode().split()[0].strip().lower()',
    'if hashlib.sha512(data).hexdigest() != expected:',
    '    sys.exit(f"maven: {url} does not match its .sha512: not installed")',
    'open("/tmp/maven.tar.gz", "wb").write(data)',
    'with tarfile.open("/tmp/maven.tar.gz") as archive:',
    '    archive.extractall("/opt")',
    'os.rename(f"/opt/apache-maven-{version}", "/opt/maven")',
    'os.remove("/tmp/maven.tar.gz")',
    'print(f"maven: apache-maven {version} from {base}, sha512 checked")',
    'DURABLE_DEBUGGER_MAVEN',
  ].join('\n');
}

/**
 * Java trusts only its own cacerts: with a CA bundle from the host (a company proxy's CA), the build's
 * JVMs trust that bundle instead, through a truststore made in /tmp of the build (one JVM run of the
 * toolchain image's Trust class, not a keytool per certificate), gone before the image is committed.
 */
export function javaTrustScript(): string {
  return [
    `if [ -n "\${${mavenVariables.caBundle}:-}" ]; then`,
    `  java -cp /opt/java-env Trust "$${mavenVariables.caBundle}" /tmp/durable-debugger-truststore.p12`,
    '  export MAVEN_OPTS="-Djavax.net.ssl.trustStore=/tmp/durable-debugger-truststore.p12 -Djavax.net.ssl.trustStorePassword=changeit -Djavax.net.ssl.trustStoreType=PKCS12"',
    'fi',
  ].join('\n');
}

const trustProgram = [
  'import java.io.*; import java.security.KeyStore; import java.security.cert.*;',
  'public class Trust { public static void main(String[] args) throws Exception {',
  '  KeyStore store = KeyStore.getInstance("PKCS12"); store.load(null, null); int count = 0;',
  '  try (InputStream in = new FileInputStream(args[0])) { for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) store.setCertificateEntry("ca-" + count++, c); }',
  '  try (OutputStream out = new FileOutputStream(args[1])) { store.store(out, "changeit".toCharArray()); }',
  '  System.out.println("java: trusting the " + count + " certificates of the host\'s CA bundle"); } }',
].join('\n');

/**
 * The toolchain image every Java repository with the same Maven release shares (the builder makes it
 * once per host, plan.basePlan): Debian's JDK with apt, Maven from Maven Central (none for Gradle),
 * the Surefire summary script and the Trust class. A JDK of another Debian suite builds on the
 * sandbox image's variant from that suite.
 */
export function javaToolchainPlan(
  jdk: DebianJdk,
  mavenVersion: string | null,
  gradle?: GradleToolchain,
): EnvironmentPlan {
  return {
    kind: 'java',
    installers: ['apt', 'maven'],
    ...(jdk.release === 'bookworm' ? {} : { debianSuite: jdk.release }),
    description: `java toolchain · openjdk ${jdk.major} (apt ${jdk.package}${jdk.release === 'bookworm' ? '' : `, ${jdk.release}`})${mavenVersion ? `, maven ${mavenVersion}` : ''}${gradle ? `, gradle ${gradle.version || '(no wrapper)'}` : ''}`,
    files: { 'surefire-reports.py': surefireScript, 'Trust.java': trustProgram },
    script: [
      'set -e',
      aptInstallScript([jdk.package]),
      'java -version 2>&1 | head -1',
      'mkdir -p /opt/java-env && cp /env-input/surefire-reports.py /opt/java-env/',
      'javac -d /opt/java-env /env-input/Trust.java',
      ...(mavenVersion
        ? [
            mavenDistributionScript(mavenVersion),
            'ln -sf /opt/maven/bin/mvn /usr/local/bin/mvn',
            `printf '<settings>\\n  <localRepository>${mavenRepository}</localRepository>\\n  <offline>true</offline>\\n</settings>\\n' > /opt/maven/conf/settings.xml`,
          ]
        : []),
      // The Gradle distribution the host found (gradleDistribution.ts), bound read-only: copied into the image.
      ...(gradle ? ['cp -a /env-toolchain/gradle /opt/gradle'] : []),
      `chmod -R a+rX /opt/java-env${mavenVersion ? ' /opt/maven' : ''}${gradle ? ' /opt/gradle' : ''}`,
    ].join('\n'),
    needsRepository: false,
    // Looked for before anything is built: a distribution that cannot be had ends the run at once.
    toolchains: gradle ? [gradle] : [],
    build: [],
    containerEnv: [],
    probes: [],
  };
}

/** The skip switches of the plugins that check sources (license headers, style) before the tests. */
const sourceChecksSkipped =
  '-Drat.skip=true -Dlicense.skip=true -Dcheckstyle.skip=true -Dspotless.check.skip=true -Dformatter.skip=true -Dimpsort.skip=true -Dpmd.skip=true -Dcpd.skip=true';

/** Modules whose build runs Surefire (packaging other than pom). */
function testedModules(reactor: MavenModule[]): MavenModule[] {
  return reactor.filter((module) => module.packaging !== 'pom');
}

/**
 * The reactor's own modules in a local repository, each at its own version's folder (groupId
 * path/artifactId/version): a copy of that version would be taken for the workspace's module.
 * Other releases of the project are left: a plugin may need one (maven-enforcer-plugin 3.0.0-M3 runs
 * on commons-lang3 3.8.1, which commons-lang3's own build uses), and the tests compile against the
 * workspace's version. A version that cannot be read here (an undefined property) means every version.
 */
function ownArtifactFolders(reactor: MavenModule[]): Array<{ coordinate: string; folder: string; module: string }> {
  return reactor
    .filter((module) => module.groupId && module.artifactId && !/\$\{/.test(`${module.groupId}${module.artifactId}`))
    .map((module) => {
      const version = plainVersion(module, reactor[0]);
      return {
        coordinate: `${module.groupId}:${module.artifactId}${version ? `:${version}` : ''}`,
        folder: `${(module.groupId as string).replace(/\./g, '/')}/${module.artifactId}${version ? `/${version}` : ''}`,
        module: module.folder || '.',
      };
    });
}

/** The module's version as written, or a `${property}` of it or of the root's (CI-friendly `${revision}`); null otherwise. */
function plainVersion(module: MavenModule, root: MavenModule | undefined): string | null {
  const property = module.version?.match(/^\$\{([\w.-]+)\}$/)?.[1];
  const version = property ? (module.properties[property] ?? root?.properties[property]) : module.version;
  return version && /^[\w.+-]+$/.test(version) ? version : null;
}

/**
 * The check that the tests compile against the workspace's modules: no module of the reactor is in
 * the image's Maven repositories (where a dependency on a released version would have put it).
 */
export function mavenReactorProbe(reactor: MavenModule[], ifPresent: boolean): EnvironmentProbe | null {
  const own = ownArtifactFolders(reactor);
  if (own.length === 0) return null;
  const repositories = [mavenRepository, '/root/.m2/repository', '/home/*/.m2/repository'];
  return {
    description: "maven: the reactor's modules come from /workspace, not from a Maven repository in the image",
    advice:
      "A Maven repository in the image holds the reactor's own artifacts (an mvn install in an image or Dockerfile you bring): build that image without installing the project.",
    files: reactor.map((module) => pomPath(module.folder)),
    script: [
      ...(ifPresent ? ['command -v mvn >/dev/null 2>&1 || [ -d /opt/maven-repository ] || exit 0'] : []),
      'bad=0',
      `for repository in ${repositories.join(' ')}; do`,
      '  [ -d "$repository" ] || continue',
      ...own.map(
        ({ coordinate, folder, module }) =>
          `  if [ -d "$repository"/${shellQuote(folder)} ]; then echo "maven: $repository holds ${coordinate}, which is the reactor's module ${module}: its tests would run that copy, not the workspace's"; bad=1; fi`,
      ),
      'done',
      'exit $bad',
    ].join('\n'),
  };
}

export function planMaven(manifests: Record<string, string>): EnvironmentPlan | null {
  const reactor = readReactor(manifests);
  if (reactor.length === 0) return null;
  const { jdk, note: jdkNote } = chooseJdk(requestedJava(manifests, reactor), enforcerRules(reactor));
  const wrapperVersion = wrapperMavenVersion(manifests[wrapperProperties]);
  const version = wrapperVersion ?? defaultMavenVersion;
  const mavenNote = wrapperVersion
    ? `maven ${version} (the wrapper's distributionUrl in ${wrapperProperties}, from Maven Central)`
    : `maven ${version} (the project has no wrapper: this release, from Maven Central)`;

  const files: Record<string, string> = {};
  for (const module of reactor)
    files[`project/${pomPath(module.folder)}`] = manifests[pomPath(module.folder)] as string;
  for (const path of mavenConfigFiles) if (manifests[path] !== undefined) files[`project/${path}`] = manifests[path];
  // Files whose existence turns on a profile (commons-parent's jacoco, japicmp): the build resolves its plugins too.
  for (const path of Object.keys(manifests).filter(isProfileMarker)) files[`project/${path}`] = '';

  const warmUp = testedModules(reactor).map((module) => {
    const folder = `/tmp/project/${module.folder ? `${module.folder}/` : ''}src/test/java/durabledebugger`;
    return `mkdir -p ${shellQuote(folder)} && echo 'package durabledebugger; public class DurableDebuggerWarmUpTest {}' > ${shellQuote(`${folder}/DurableDebuggerWarmUpTest.java`)}`;
  });
  // The image's settings.xml says offline: the build names the user's settings (-s) and goes online (-o false is no flag: -gs).
  const mvn = `mvn -B -ntp -gs /opt/maven/conf/settings.online.xml -s "$${mavenVariables.settings}" -Dmaven.repo.local=${mavenRepository}`;
  const script = [
    'set -e',
    javaTrustScript(),
    `printf '<settings/>\\n' > /opt/maven/conf/settings.online.xml`,
    // The poms in a scratch copy: nothing of the repository's code runs here but Maven's plugins.
    'cp -r /env-input/project /tmp/project && cd /tmp/project',
    ...warmUp,
    // Resolves what `mvn -o test` needs, as it needs it: the plugins of the phases up to test, the
    // dependencies of every scope the tests see, and Surefire's provider (the warm-up classes run).
    // The checks that read the sources would read the warm-up classes, which carry no license header
    // and no style (Apache RAT fails every Apache project's build so): skipped here, still resolved.
    `${mvn} -fae test -Dmaven.test.failure.ignore=true -DfailIfNoTests=false -Dsurefire.failIfNoSpecifiedTests=false ${sourceChecksSkipped}`,
    ...ownArtifactFolders(reactor).map(
      ({ coordinate, folder }) =>
        `if [ -d ${mavenRepository}/${shellQuote(folder)} ]; then echo "maven: removing ${coordinate}, pulled from the registry by a dependency: the tests use the workspace's own module"; rm -rf ${mavenRepository}/${shellQuote(folder)}; fi`,
    ),
    // Offline, every artifact counts as local, whichever repository (Central, a mirror) it came from.
    `find ${mavenRepository} \\( -name _remote.repositories -o -name '*.lastUpdated' -o -name 'resolver-status.properties' \\) -delete`,
    `chmod -R a+rX ${mavenRepository}`,
    'cd / && rm -rf /tmp/project /root/.m2 /tmp/durable-debugger-truststore.p12 /opt/maven/conf/settings.online.xml',
    `echo "packages: $(find ${mavenRepository} -name '*.jar' | wc -l)"`,
  ].join('\n');
  const modules = testedModules(reactor).length;
  const probe = mavenReactorProbe(reactor, false);
  return {
    kind: 'java',
    installers: ['maven'],
    basePlan: javaToolchainPlan(jdk, version),
    description: `java · maven ${version}${wrapperVersion ? ' (wrapper)' : ''}, ${reactor.length > 1 ? `a reactor of ${reactor.length} pom.xml (${modules} with tests)` : 'pom.xml'}, mvn -o test in the sandbox`,
    files,
    script,
    needsRepository: false,
    toolchains: [],
    testCommand: surefireTestCommand(mavenTestCommand),
    build: [],
    containerEnv: [],
    toolchainNotes: [jdkNote, mavenNote],
    probes: probe ? [probe] : [],
  };
}
