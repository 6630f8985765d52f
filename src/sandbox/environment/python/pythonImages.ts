// The Python a repository allows (requires-python) against the sandbox's: a Python repository runs on
// a sandbox image with one it allows, built from another Debian suite by `durable-debugger setup --python
// 3.13`, or the run ends saying how to make or bring one. Each image is asked for its Python once per
// host: an image id names its content, so the answer is kept in a file (a worker's first Python build
// would otherwise start a container for it, about half a second).
import type Docker from 'dockerode';
import type { KeptAnswers } from '../keptAnswers.js';
import { ImageLookups } from '../imageLookups.js';
import { labels, projectLabel, removeContainer } from '../../container/container.js';
import { EnvironmentBuildError, type EnvironmentPlan } from '../planTypes.js';
import { repositoryProbes } from '../ecosystems.js';
import { readPythonProject } from './pythonProject.js';
import { allowsPython, debianPythons, explainPythonMismatch, pythonVariantImage } from './pythonVersions.js';

export class SandboxPythons {
  /** The Python of each image asked so far, by image id. */
  private readonly versions = new Map<string, Promise<string | null>>();

  constructor(
    private readonly docker: Docker,
    private readonly sandboxImage: string,
    /** The answers kept on this host, by image id; without it, only in this process. */
    private readonly kept?: KeptAnswers,
  ) {}

  /**
   * A Python repository whose requires-python excludes the sandbox's Python runs on a sandbox image
   * with one it allows (`durable-debugger setup --python 3.13`), or ends saying how to make one.
   * An image, setup commands or a Dockerfile the repository or the run names is theirs to choose.
   */
  async onAllowedPython(
    plan: EnvironmentPlan | null,
    files: string[],
    manifests: Record<string, string>,
    images = new ImageLookups(this.docker),
  ): Promise<EnvironmentPlan | null> {
    if (plan && plan.kind !== 'python') return plan;
    const requirement = readPythonProject(manifests).requiresPython;
    if (!requirement) return plan;
    const sandboxImage = this.sandboxImage;
    const version = await this.pythonVersionOf(sandboxImage, images);
    if (!version || allowsPython(requirement.specifier, version) !== false) return plan;
    for (const python of debianPythons) {
      const image = pythonVariantImage(sandboxImage, python.minor);
      const found = await this.pythonVersionOf(image, images);
      if (!found || !allowsPython(requirement.specifier, found)) continue;
      const why = `python ${found} (${requirement.source}: ${requirement.specifier})`;
      // A plan built on a tools image (a lock's export tool) gets that Python through it.
      if (plan)
        return {
          ...plan,
          baseImage: image,
          ...(plan.basePlan ? { basePlan: { ...plan.basePlan, baseImage: image } } : {}),
          description: `${plan.description} · ${why}`,
        };
      return {
        kind: 'image',
        description: `image · ${image} · ${why}`,
        baseImage: image,
        files: {},
        script: '',
        needsRepository: false,
        toolchains: [],
        build: [],
        containerEnv: [],
        probes: repositoryProbes(files, manifests),
      };
    }
    throw new EnvironmentBuildError(explainPythonMismatch(requirement, { image: sandboxImage, version }));
  }

  /** The Python an image has (`python3`), asked once per image id; null when the image or its python3 is missing. */
  private async pythonVersionOf(image: string, images: ImageLookups): Promise<string | null> {
    const info = await images.inspect(image);
    if (!info) return null;
    let known = this.versions.get(info.Id);
    if (!known) {
      known = this.keptPythonVersion(info.Id);
      this.versions.set(info.Id, known);
    }
    return known;
  }

  private async keptPythonVersion(imageId: string): Promise<string | null> {
    const key = imageId.replace(/^sha256:/, '');
    const kept = await this.kept?.get(key);
    if (kept && /^\d+\.\d+\.\d+$/.test(kept)) return kept;
    const version = await this.askPythonVersion(imageId);
    // Only a version is kept: no answer may be a check that failed this once.
    if (version) await this.kept?.keep(key, version);
    return version;
  }

  private async askPythonVersion(imageId: string): Promise<string | null> {
    const { docker } = this;
    const container = await docker.createContainer({
      Image: imageId,
      Cmd: ['sh', '-c', 'python3 -c "import platform; print(platform.python_version())" 2>/dev/null || true'],
      User: '65534:65534',
      Labels: { [labels.project]: projectLabel },
      HostConfig: { NetworkMode: 'none', AutoRemove: false, LogConfig: { Type: 'json-file', Config: {} } },
    });
    try {
      await container.start();
      await container.wait();
      const logs = (await container.logs({ stdout: true, stderr: false })) as Buffer;
      return (
        logs
          .toString('utf8')
          .match(/\d+\.\d+\.\d+/)
          ?.at(0) ?? null
      );
    } finally {
      await removeContainer(docker, container.id);
    }
  }
}
