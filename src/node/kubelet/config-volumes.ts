// Sets up a pod's configMap, secret, downwardAPI and projected volumes on the node, and brings them up to date on later syncs.
import type { Pod } from '../../core/api/pod.js';
import { podVolumeDir } from '../../runtime/docker-container-config.js';
import { writeAtomically } from './atomic-writer.js';
import type { ConfigReader } from './env-resolve.js';
import {
  configMapFileData,
  isProjectingVolume,
  type ProjectionObjects,
  secretFileData,
  volumeFiles,
  volumeReferences,
  VolumeSetUpError,
} from './projected-volumes.js';

export interface ConfigVolumesOptions {
  /** The runtime's root: volumes live in ROOT/pods/<uid>/volumes/<name>, where the runtime binds them from. */
  rootDir: string;
  reader: ConfigReader;
  now?: () => Date;
}

export class ConfigVolumes {
  readonly #o: ConfigVolumesOptions;

  constructor(options: ConfigVolumesOptions) {
    this.#o = options;
  }

  /** Whether the pod has volumes this writes (pods without any cost no API reads). */
  static needed(pod: Pod): boolean {
    return (pod.spec.volumes ?? []).some(isProjectingVolume);
  }

  /**
   * Writes every such volume of the pod, reading each object it names once. Resolves with the names
   * of the volumes whose files changed; throws VolumeSetUpError, worded as the kubelet's FailedMount
   * event, for the first volume that cannot be set up (the others are still written).
   */
  async setUp(pod: Pod): Promise<string[]> {
    const volumes = (pod.spec.volumes ?? []).filter(isProjectingVolume);
    if (volumes.length === 0) return [];
    const namespace = pod.metadata.namespace ?? 'default';
    const configMaps = new Map<string, Record<string, Buffer> | undefined>();
    const secrets = new Map<string, Record<string, Buffer> | undefined>();
    for (const vol of volumes) {
      const refs = volumeReferences(vol);
      for (const name of refs.configMaps) {
        if (configMaps.has(name)) continue;
        const cm = await this.#o.reader.readConfigMap?.(namespace, name);
        configMaps.set(name, cm ? configMapFileData(cm) : undefined);
      }
      for (const name of refs.secrets) {
        if (secrets.has(name)) continue;
        const data = await this.#o.reader.readSecret?.(namespace, name);
        secrets.set(name, data ? secretFileData(data) : undefined);
      }
    }
    const objects: ProjectionObjects = { configMap: (n) => configMaps.get(n), secret: (n) => secrets.get(n) };
    const changed: string[] = [];
    let failure: VolumeSetUpError | undefined;
    for (const vol of volumes) {
      try {
        const files = volumeFiles(vol, pod, objects) ?? [];
        if (writeAtomically(podVolumeDir(this.#o.rootDir, pod.metadata.uid!, vol.name), files, this.#o.now?.())) changed.push(vol.name);
      } catch (err) {
        if (!(err instanceof VolumeSetUpError)) throw err;
        failure ??= new VolumeSetUpError(`MountVolume.SetUp failed for volume "${vol.name}" : ${err.message}`);
      }
    }
    if (failure) throw failure;
    return changed;
  }
}
