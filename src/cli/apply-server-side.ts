// `minik8s apply --server-side`: sends each manifest whole as an apply patch; the API server merges it by field ownership and answers conflicts with other managers.
import type { ApiClient } from '../core/client/api-client.js';
import { kindObjectPath } from '../core/client/api-client.js';
import { manifestName } from './apply-object.js';
import type { Manifest } from './manifests.js';

export interface ServerSideApplyOptions {
  /** The manager the fields are recorded under (kubectl's default is `kubectl`; ours is `minik8s`). */
  fieldManager: string;
  /** Take fields other managers own instead of failing with their conflicts. */
  force: boolean;
}

/** Applies one manifest server-side; the answer names it as kubectl does (`serverside-applied`). */
export async function applyServerSide(client: ApiClient, manifest: Manifest, namespace: string | undefined, options: ServerSideApplyOptions): Promise<string> {
  const name = manifestName(manifest);
  const body = namespace ? { ...manifest.object, metadata: { ...manifest.object.metadata, namespace } } : manifest.object;
  // JSON is YAML: the body needs no YAML encoding.
  await client.request('PATCH', kindObjectPath(manifest.def, name, namespace), {
    body,
    contentType: 'application/apply-patch+yaml',
    query: { fieldManager: options.fieldManager, ...(options.force ? { force: 'true' } : {}) },
  });
  return 'serverside-applied';
}
