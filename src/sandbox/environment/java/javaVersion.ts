// The Java a Maven or Gradle build asks for, and the JDK it gets: Debian's OpenJDK of the sandbox
// image's release (bookworm: openjdk-17), installed with apt in the build. A JDK compiles for older
// releases (javac --release 8), so a build that asks for 8, 11 or 17 gets it; one that needs a newer
// Java, or one the JDK can no longer target, is told so instead of failing later in javac.
import { EnvironmentConfigError } from '../planTypes.js';
import { resolveProperty, type MavenModule } from './mavenProject.js';

/** The JDK the environment installs: the sandbox image's Debian release (bookworm) has this one. */
export const debianJdk = { major: 17, package: 'openjdk-17-jdk-headless', release: 'bookworm' } as const;
/** The oldest release javac 17 still compiles for (--release 7 is deprecated but accepted; 6 was dropped in JDK 12). */
const oldestTarget = 7;

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
 * The JDK for the build: Debian's, when it can build what the repository asks for; an
 * EnvironmentConfigError saying why not otherwise. Returns the note for the report.
 */
export function chooseJdk(request: JavaRequest, enforcer: Array<{ pom: string; range: string }>): string {
  const { major, package: name, release } = debianJdk;
  const offered = `this environment's JDK is Debian ${release}'s OpenJDK ${major} (${name}), the one the sandbox image's Debian release has`;
  if (request.major !== undefined && request.major > major)
    throw new EnvironmentConfigError(
      `The build asks for Java ${request.major} (${request.reasons.join(', ')}), and ${offered}: it cannot compile for Java ${request.major}. Lower the release to ${major}, or name an image with a newer JDK in durable-debugger.json ("image").`,
    );
  if (request.major !== undefined && request.major < oldestTarget)
    throw new EnvironmentConfigError(
      `The build asks for Java ${request.major} (${request.reasons.join(', ')}), and ${offered}: javac ${major} compiles for Java ${oldestTarget} and newer only. Raise the release, or name an image with an older JDK in durable-debugger.json ("image").`,
    );
  const refusing = enforcer.find((rule) => !satisfiesJavaRange(rule.range, major));
  if (refusing)
    throw new EnvironmentConfigError(
      `${refusing.pom}'s maven-enforcer-plugin requires Java ${refusing.range}, and ${offered}. Name an image with such a JDK in durable-debugger.json ("image").`,
    );
  const why = request.major
    ? `Debian ${release}'s JDK; the build asks for Java ${request.major}: ${request.reasons.slice(0, 3).join(', ')}`
    : `Debian ${release}'s JDK; the build names no Java release`;
  return `openjdk ${major} (${why})`;
}

export function enforcerRules(reactor: MavenModule[]): Array<{ pom: string; range: string }> {
  const root = reactor[0]?.properties ?? {};
  return reactor.flatMap((module) => {
    const range = resolveProperty(module.enforcerJava, module.properties, root);
    return range ? [{ pom: module.folder ? `${module.folder}/pom.xml` : 'pom.xml', range }] : [];
  });
}
