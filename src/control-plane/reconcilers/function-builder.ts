// The function controller's image builder for the master: the image factory on the master's Docker, or, when it cannot build (no registry, no template), one that says why at each build.
import type { BuiltImage } from '../../runtime/image-factory/image-factory.js';
import { BuildError, ImageFactory } from '../../runtime/image-factory/image-factory.js';
import type { FunctionImageBuilder } from './function.js';

export interface FunctionBuilderOptions {
  /** Where this machine reaches the master's registry; undefined with --no-registry. */
  registryEndpoint?: string;
  dockerHost?: string;
  pipIndexUrl?: string;
  templateDir?: string;
  log?: (message: string) => void;
}

/** Fails every build with one reason: functions are still accepted, and their Built condition tells the user. */
class UnavailableBuilder implements FunctionImageBuilder {
  readonly templateHash = 'unavailable';
  constructor(readonly reason: string) {}
  async build(): Promise<BuiltImage> {
    throw new BuildError(this.reason);
  }
}

export async function startFunctionBuilder(options: FunctionBuilderOptions): Promise<FunctionImageBuilder> {
  const log = options.log ?? (() => {});
  if (!options.registryEndpoint) return new UnavailableBuilder('the master runs no image registry (--no-registry): function images cannot be built');
  try {
    return await ImageFactory.create({
      registryEndpoint: options.registryEndpoint,
      dockerHost: options.dockerHost,
      pipIndexUrl: options.pipIndexUrl,
      templateDir: options.templateDir,
      log,
    });
  } catch (err) {
    const reason = `the image factory cannot start: ${err instanceof Error ? err.message : String(err)}`;
    log(`warning: ${reason}`);
    return new UnavailableBuilder(reason);
  }
}
