// The user's local files that commands upload (manifests, function code, GpuJob programs): whether a path exists, whether bytes can travel as text.
import { stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { CliError } from './cli-error.js';

/** The path's stat, or kubectl's `the path "..." does not exist` (`what` names the path in that message). */
export async function statExisting(path: string, what = 'path'): Promise<Stats> {
  try {
    return await stat(path);
  } catch {
    throw new CliError(`the ${what} "${path}" does not exist`);
  }
}

/** Whether the bytes can go in a manifest as text (valid UTF-8, no NUL), rather than as base64. */
export function isText(data: Buffer): boolean {
  if (data.includes(0)) return false;
  try {
    // fatal: a byte sequence that is not UTF-8 throws instead of becoming U+FFFD.
    new TextDecoder('utf-8', { fatal: true }).decode(data);
    return true;
  } catch {
    return false;
  }
}
