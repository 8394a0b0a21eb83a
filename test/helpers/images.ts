// Base images for integration tests: the shared module in scripts/sim (which `sim-cluster up` uses too), under the name tests import.
export {
  BASE_IMAGES,
  LOCAL_REGISTRY,
  ensureBaseImages,
  missingBaseImages,
  prebuiltRegistryStore,
  seedRegistryStore,
  tagLinkPath,
} from '../../scripts/sim/base-images.js';
