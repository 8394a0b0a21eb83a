// Writes a volume's files as the kubelet's AtomicWriter does: a timestamped dir, a `..data` symlink swapped by rename, and one symlink per top-level name.
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { ProjectedFile } from './projected-volumes.js';

const DATA_LINK = '..data';

/** `..2026_11_26_09_13_05.123456789`-like names, as Kubernetes' timestamped payload dirs (a random tail keeps them apart). */
function payloadDirName(now: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const stamp = `${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}`;
  return `..${stamp}.${randomBytes(5).toString('hex')}`;
}

/** Whether the payload dir holds exactly these files with these modes and contents. */
function samePayload(dir: string, files: readonly ProjectedFile[]): boolean {
  const listed = (sub: string): string[] =>
    readdirSync(join(dir, sub), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listed(join(sub, e.name)) : [join(sub, e.name)]));
  const present = listed('').sort();
  if (present.length !== files.length || present.some((p, i) => p !== files[i]!.path)) return false;
  return files.every((f) => {
    const path = join(dir, f.path);
    return (statSync(path).mode & 0o777) === f.mode && readFileSync(path).equals(f.content);
  });
}

/**
 * Makes `dir` show exactly `files`: written into a new timestamped dir, published by renaming a
 * fresh `..data` symlink over the old one (readers see the old set or the new, never half), with
 * `NAME -> ..data/NAME` links for the top-level names; the old payload and stale links go after.
 * Nothing is written when the files are already there. Returns whether anything changed.
 */
export function writeAtomically(dir: string, files: readonly ProjectedFile[], now = new Date()): boolean {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const dataLink = join(dir, DATA_LINK);
  const current = existsSync(dataLink) ? readlinkSync(dataLink) : undefined;
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (current !== undefined && samePayload(join(dir, current), sorted)) return false;

  const payload = payloadDirName(now);
  mkdirSync(join(dir, payload), { mode: 0o755 });
  for (const f of sorted) {
    const path = join(dir, payload, f.path);
    mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
    writeFileSync(path, f.content, { mode: f.mode });
    // The umask may have taken bits off: the mode asked for is the mode the container sees.
    chmodSync(path, f.mode);
  }
  const tmpLink = join(dir, '..data_tmp');
  rmSync(tmpLink, { force: true });
  symlinkSync(payload, tmpLink);
  renameSync(tmpLink, dataLink);

  const topNames = new Set(sorted.map((f) => f.path.split('/')[0]!));
  for (const name of topNames) {
    const link = join(dir, name);
    if (!existsSync(link) && !isLink(link)) symlinkSync(join(DATA_LINK, name), link);
  }
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith('..')) {
      if (entry !== DATA_LINK && entry !== payload) rmSync(join(dir, entry), { recursive: true, force: true });
    } else if (!topNames.has(entry) && isLink(join(dir, entry))) {
      rmSync(join(dir, entry), { force: true });
    }
  }
  return true;
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
