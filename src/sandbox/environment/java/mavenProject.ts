// What a Maven build says of itself, read from its pom.xml files without running Maven: the
// reactor's modules and their coordinates, the properties, the compiler's release/source/target
// and the enforcer's requireJavaVersion. Pure and forgiving: a pom is XML that Maven reads, and
// what cannot be read here is left to Maven, whose own message then says what is wrong.

export interface MavenModule {
  /** The module's folder relative to the repository ('' for the root). */
  folder: string;
  groupId?: string;
  artifactId?: string;
  version?: string;
  packaging: string;
  /** Folders named by <modules>, relative to this module. */
  modules: string[];
  properties: Record<string, string>;
  /** maven-compiler-plugin's <release>, <source>, <target> (as written, properties unresolved). */
  compiler: { release?: string; source?: string; target?: string };
  /** maven-enforcer-plugin's requireJavaVersion <version> (a Maven version range or a plain version). */
  enforcerJava?: string;
  /** Dependencies as groupId:artifactId:version (version as written, or '' when managed). */
  dependencies: Array<{ groupId: string; artifactId: string; version: string }>;
}

/** Blocks whose own <groupId>, <version>, <modules>, <properties> are not the project's. */
const nestedBlocks = [
  'profiles',
  'parent',
  'dependencyManagement',
  'dependencies',
  'build',
  'reporting',
  'distributionManagement',
  'repositories',
  'pluginRepositories',
  'developers',
  'contributors',
  'licenses',
  'scm',
  'organization',
  'issueManagement',
  'ciManagement',
  'mailingLists',
];

function withoutComments(xml: string): string {
  return xml.replace(/<!--[\s\S]*?-->/g, '');
}

function block(xml: string, name: string): string | undefined {
  return xml.match(new RegExp(`<${name}(?:\\s[^>]*)?>([\\s\\S]*?)</${name}>`))?.[1];
}

function text(xml: string | undefined, name: string): string | undefined {
  if (xml === undefined) return undefined;
  return xml.match(new RegExp(`<${name}>\\s*([^<]*?)\\s*</${name}>`))?.[1];
}

function topLevel(xml: string): string {
  let rest = xml;
  for (const name of nestedBlocks)
    rest = rest.replace(new RegExp(`<${name}(?:\\s[^>]*)?>[\\s\\S]*?</${name}>`, 'g'), '');
  return rest;
}

/** The <plugin> blocks of a pom's <build> (its pluginManagement included) whose artifactId is `artifactId`. */
function pluginBlocks(xml: string, artifactId: string): string[] {
  const build = (withoutProfiles(xml).match(/<build>[\s\S]*<\/build>/) ?? [''])[0];
  return [...build.matchAll(/<plugin>([\s\S]*?)<\/plugin>/g)]
    .map((match) => match[1] as string)
    .filter(
      (plugin) => text(plugin.replace(/<dependencies>[\s\S]*?<\/dependencies>/g, ''), 'artifactId') === artifactId,
    );
}

function withoutProfiles(xml: string): string {
  return xml.replace(/<profiles>[\s\S]*?<\/profiles>/g, '');
}

export function readPom(folder: string, raw: string): MavenModule {
  const xml = withoutComments(raw);
  const project = block(xml, 'project') ?? xml;
  const own = topLevel(project);
  const parent = block(project, 'parent');
  const properties: Record<string, string> = {};
  const propertiesBlock = block(own, 'properties');
  if (propertiesBlock)
    for (const match of propertiesBlock.matchAll(/<([\w.-]+)>\s*([^<]*?)\s*<\/\1>/g))
      properties[match[1] as string] = match[2] as string;
  const compiler: MavenModule['compiler'] = {};
  for (const plugin of pluginBlocks(project, 'maven-compiler-plugin')) {
    const configuration = block(plugin, 'configuration');
    for (const key of ['release', 'source', 'target'] as const) {
      const value = text(configuration, key);
      if (value !== undefined) compiler[key] = value;
    }
  }
  let enforcerJava: string | undefined;
  for (const plugin of pluginBlocks(project, 'maven-enforcer-plugin')) {
    const rule = block(plugin, 'requireJavaVersion');
    enforcerJava = text(rule, 'version') ?? enforcerJava;
  }
  const dependencies = [
    ...(withoutProfiles(project)
      .replace(/<dependencyManagement>[\s\S]*?<\/dependencyManagement>/g, '')
      .replace(/<build>[\s\S]*?<\/build>/g, '')
      .matchAll(/<dependency>([\s\S]*?)<\/dependency>/g) ?? []),
  ].map((match) => ({
    groupId: text(match[1], 'groupId') ?? '',
    artifactId: text(match[1], 'artifactId') ?? '',
    version: text(match[1], 'version') ?? '',
  }));
  const modulesBlock = block(own, 'modules');
  return {
    folder,
    groupId: text(own, 'groupId') ?? text(parent, 'groupId'),
    artifactId: text(own, 'artifactId'),
    version: text(own, 'version') ?? text(parent, 'version'),
    packaging: text(own, 'packaging') ?? 'jar',
    modules: modulesBlock
      ? [...modulesBlock.matchAll(/<module>\s*([^<]+?)\s*<\/module>/g)].map((m) => m[1] as string)
      : [],
    properties,
    compiler,
    ...(enforcerJava ? { enforcerJava } : {}),
    dependencies,
  };
}

/** `a/b/../c` → `a/c`; null when it leaves the repository. */
function normalize(path: string): string | null {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join('/');
}

/**
 * commons-parent's profile markers (src/site/resources/profile.jacoco, profile.japicmp): empty files
 * whose existence turns on a profile, and with it the plugins `mvn test` runs; the build must see them.
 */
export function isProfileMarker(path: string): boolean {
  return /^([\w.-]+\/){0,3}src\/site\/resources\/profile\.[\w-]+$/.test(path);
}

export function pomPath(folder: string): string {
  return folder ? `${folder}/pom.xml` : 'pom.xml';
}

/**
 * The reactor the root pom.xml makes: the root and every module it names (recursively), as far as
 * their pom.xml files are in the repository. Cycles and modules outside the repository are skipped.
 */
export function readReactor(manifests: Record<string, string>): MavenModule[] {
  const root = manifests['pom.xml'];
  if (root === undefined) return [];
  const seen = new Set<string>();
  const modules: MavenModule[] = [];
  const visit = (folder: string) => {
    if (seen.has(folder) || modules.length >= 500) return;
    seen.add(folder);
    const text = manifests[pomPath(folder)];
    if (text === undefined) return;
    const module = readPom(folder, text);
    modules.push(module);
    for (const name of module.modules) {
      const child = normalize(`${folder}/${name.replace(/\/pom\.xml$/, '')}`);
      if (child !== null) visit(child);
    }
  };
  visit('');
  return modules;
}

/** `${name}` resolved against the module's properties, then the root's (a parent's, in most reactors). */
export function resolveProperty(
  value: string | undefined,
  ...scopes: Array<Record<string, string>>
): string | undefined {
  let resolved = value;
  for (let depth = 0; resolved !== undefined && /\$\{[^}]+\}/.test(resolved) && depth < 5; depth++) {
    resolved = resolved.replace(/\$\{([^}]+)\}/g, (whole, name: string) => {
      for (const scope of scopes) if (scope[name] !== undefined) return scope[name] as string;
      return whole;
    });
  }
  return resolved === undefined || /\$\{/.test(resolved) ? undefined : resolved;
}
