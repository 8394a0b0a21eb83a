// `apply` for GpuJobs: the program's files (up to 1 MiB) stay out of the last-applied annotation (at most 256 KiB), which remembers them by digest.
import type { ApiClient } from '../core/client/api-client.js';
import { applyWithBulkyField, type ApplyOutcome } from './apply-object.js';
import type { Manifest } from './manifests.js';

/**
 * Creates the job, or reports it unchanged. A GpuJob's spec cannot change (it runs what it was
 * created with): a changed manifest is sent as a patch all the same, and the server's 422 says to
 * delete and apply again.
 */
export function applyGpuJob(client: ApiClient, manifest: Manifest, namespace: string | undefined): Promise<ApplyOutcome> {
  return applyWithBulkyField(client, manifest, namespace, {
    field: 'program',
    keptOut: (program) => program !== undefined,
    // The whole program: the server refuses any change to it anyway.
    replacement: (_live, wanted) => wanted,
  });
}
