// The Java a Maven or Gradle build asks for, and the JDK it gets: Debian's OpenJDK, installed with
// apt in the build: bookworm's 17 on the sandbox image, or trixie's 21 on the sandbox image's trixie
// variant (the one `durable-debugger setup --python 3.13` builds). A JDK compiles for older releases
// (javac --release 8), so a build that asks for 8, 11 or 17 gets 17 and one that asks for 18 to 21
// gets 21; one that needs a newer Java, or one no JDK here can target, is told so instead of failing
// later in javac.
import { EnvironmentConfigError } from '../planTypes.js';
import { resolveProperty, type MavenModule } from './mavenProject.js';

export interface DebianJdk {
  major: number;
  package: string;
  /** The Debian suite that has it: the sandbox image's own (bookworm) or its variant's. */
  release: 'bookworm' | 'trixie';
  /** The oldest release its javac compiles for (JDK 12 dropped 6, JDK 20 dropped 7). */
  oldestTarget: number;
}

/** The JDKs an environment can install, the sandbox image's own first: the first that fits is used. */
export const debianJdks: readonly DebianJdk[] = [
  { major: 17, package: 'openjdk-17-jdk-headless', release: 'bookworm', oldestTarget: 7 },
  { major: 21, package: 'openjdk-21-jdk-headless', release: 'trixie', oldestTarget: 8 },
];

export interface JavaRequest {
  /** The newest release a file asks for (8 for "1.8"); undefined when nothing asks. */
  major?: number;
  /** The files and settings that asked, for people: "pom.xml maven.compiler.release 11". */
  reasons: string[];
}

/** "1.8" → 8, "17" → 17, "17.0.2" → 17, "temurin-17.0.2", "17.0.9-tem" → 17; undefined when no version. */
export function javaMajor(version: string): number | undefined {
  const match = version.match(/(\d+)(?:\.(\d+))?/);
  if (!match) return undefined;
  const major = Number(match[1] === '1' && match[2] !== undefined ? match[2] : match[1]);
  return major > 0 && major < 100 ? major : undefined;
}

/**
 * Whether `major` satisfies a Maven version range ("[17,)", "[1.8,11)", "(,21]") or a plain
 * version (the enforcer reads "17" as "17 or newer"). Unreadable ranges are left to the enforcer.
 */
export function satisfiesJavaRange(range: string, major: number): boolean {
  const spec = range.trim();
  if (!/^[[(]/.test(spec)) {
    const minimum = javaMajor(spec);
    return minimum === undefined || major >= minimum;
  }
  // A union ("[1.8,9),[11,)") holds when any part does.
  const parts = spec.match(/[[(][^\])]*[\])]/g) ?? [];
  if (parts.length === 0) return true;
  return parts.some((part) => {
    const inclusiveLow = part.startsWith('[');
    const inclusiveHigh = part.endsWith(']');
    const [lowText = '', highText] = part.slice(1, -1).split(',');
    const low = lowText.trim() ? javaMajor(lowText) : undefined;
    // "[17]" is exactly 17.
    const high = highText === undefined ? low : highText.trim() ? javaMajor(highText) : undefined;
    if (low !== undefined && (inclusiveLow ? major < low : major <= low)) return false;
    if (high !== undefined && (inclusiveHigh || highText === undefined ? major > high : major >= high)) return false;
    return true;
  });
}

/** What the repository's files ask for: .java-version, .sdkmanrc, and each reactor module's compiler settings. */
export function requestedJava(manifests: Record<string, string>, reactor: MavenModule[]): JavaRequest {
  const asks: Array<{ major: number; reason: string }> = [];
  const javaVersionFile = manifests['.java-version']?.split('\n')[0]?.trim();
  const fromFile = javaVersionFile ? javaMajor(javaVersionFile) : undefined;
  if (fromFile) asks.push({ major: fromFile, reason: `.java-version ${javaVersionFile}` });
  const sdkman = manifests['.sdkmanrc']?.match(/^\s*java\s*=\s*(\S+)/m)?.[1];
  const fromSdkman = sdkman ? javaMajor(sdkman) : undefined;
  if (fromSdkman) asks.push({ major: fromSdkman, reason: `.sdkmanrc java=${sdkman}` });
  const root = reactor[0]?.properties ?? {};
  for (const module of reactor) {
    const pom = module.folder ? `${module.folder}/pom.xml` : 'pom.xml';
    const settings: Array<[string, string | undefined]> = [
      ['maven.compiler.release', module.properties['maven.compiler.release']],
      ['maven.compiler.source', module.properties['maven.compiler.source']],
      ['maven.compiler.target', module.properties['maven.compiler.target']],
      ['java.version', module.properties['java.version']],
      ['maven-compiler-plugin <release>', module.compiler.release],
      ['maven-compiler-plugin <source>', module.compiler.source],
      ['maven-compiler-plugin <target>', module.compiler.target],
    ];
    for (const [name, value] of settings) {
      const resolved = resolveProperty(value, module.properties, root);
      const major = resolved ? javaMajor(resolved) : undefined;
      if (major) asks.push({ major, reason: `${pom} ${name} ${resolved}` });
    }
  }
  if (asks.length === 0) return { reasons: [] };
  const major = Math.max(...asks.map((ask) => ask.major));
  const reasons = [...new Set(asks.filter((ask) => ask.major === major).map((ask) => ask.reason))];
  return { major, reasons };
}

/**
 * The JDK for the build: the first of Debian's that can build what the repository asks for (its
 * release and its enforcer rules); an EnvironmentConfigError saying why none can otherwise.
 * Returns the JDK and the note for the report.
 */
export function chooseJdk(
  request: JavaRequest,
  enforcer: Array<{ pom: string; range: string }>,
): { jdk: DebianJdk; note: string } {
  const targets = (jdk: DebianJdk) =>
    request.major === undefined || (request.major <= jdk.major && request.major >= jdk.oldestTarget);
  const jdk = debianJdks.find(
    (candidate) => targets(candidate) && enforcer.every((rule) => satisfiesJavaRange(rule.range, candidate.major)),
  );
  if (!jdk) {
    const offered = `the JDKs here are ${debianJdks.map((each) => `Debian ${each.release}'s OpenJDK ${each.major} (${each.package})`).join(' and ')}`;
    const newest = debianJdks.at(-1) as DebianJdk;
    const oldest = Math.min(...debianJdks.map((each) => each.oldestTarget));
    if (request.major !== undefined && request.major > newest.major)
      throw new EnvironmentConfigError(
        `The build asks for Java ${request.major} (${request.reasons.join(', ')}), and ${offered}: none compiles for Java ${request.major}. Lower the release to ${newest.major}, or name an image with a newer JDK in durable-debugger.json ("image").`,
      );
    if (request.major !== undefined && request.major < oldest)
      throw new EnvironmentConfigError(
        `The build asks for Java ${request.major} (${request.reasons.join(', ')}), and ${offered}: they compile for Java ${oldest} and newer only. Raise the release, or name an image with an older JDK in durable-debugger.json ("image").`,
      );
    const refusing = enforcer.find(
      (rule) => !debianJdks.some((each) => targets(each) && satisfiesJavaRange(rule.range, each.major)),
    );
    throw new EnvironmentConfigError(
      `${refusing?.pom ?? 'pom.xml'}'s maven-enforcer-plugin requires Java ${refusing?.range ?? 'another release'}, and ${offered}. Name an image with such a JDK in durable-debugger.json ("image").`,
    );
  }
  const where = jdk.release === 'bookworm' ? '' : `, on the sandbox image's ${jdk.release} variant`;
  const why = request.major
    ? `Debian ${jdk.release}'s JDK${where}; the build asks for Java ${request.major}: ${request.reasons.slice(0, 3).join(', ')}`
    : `Debian ${jdk.release}'s JDK; the build names no Java release`;
  return { jdk, note: `openjdk ${jdk.major} (${why})` };
}

export function enforcerRules(reactor: MavenModule[]): Array<{ pom: string; range: string }> {
  const root = reactor[0]?.properties ?? {};
  return reactor.flatMap((module) => {
    const range = resolveProperty(module.enforcerJava, module.properties, root);
    return range ? [{ pom: module.folder ? `${module.folder}/pom.xml` : 'pom.xml', range }] : [];
  });
}
