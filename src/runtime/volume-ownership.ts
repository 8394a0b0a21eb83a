// fsGroup on a pod's volumes: every file group-owned by the fsGroup, group-readable (and writable unless read-only), directories setgid so new files keep the group.
import { chmodSync, lchownSync, lstatSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';

export interface OwnershipOptions {
  fsGroup: number;
  /** Volumes containers cannot write (configMap, secret, projected): group read only. */
  readOnly?: boolean;
  /** OnRootMismatch skips the walk when the volume's root already has the group and mode; Always (the default) walks every time. */
  policy?: 'OnRootMismatch' | 'Always';
}

const RW = 0o660;
const RO = 0o440;
const EXEC = 0o110;
const SETGID = 0o2000;

/** The mode a file or directory gets under fsGroup, as the kubelet's SetVolumeOwnership makes it. */
export function ownershipMode(mode: number, isDirectory: boolean, readOnly: boolean): number {
  let mask = readOnly ? RO : RW;
  if (isDirectory) mask |= SETGID | EXEC;
  return (mode & 0o7777) | mask;
}

/** Whether the root already looks as the walk leaves it (OnRootMismatch's test). */
export function rootMatches(st: Pick<Stats, 'gid' | 'mode'>, options: OwnershipOptions): boolean {
  const want = ownershipMode(st.mode, true, options.readOnly ?? false);
  return st.gid === options.fsGroup && (st.mode & 0o7777) === want;
}

/** Applies fsGroup to the tree at `dir`; symlinks (the atomic writer's) get the group but are not followed. Returns whether it walked. */
export function applyFsGroup(dir: string, options: OwnershipOptions): boolean {
  const root = lstatSync(dir);
  if (options.policy === 'OnRootMismatch' && rootMatches(root, options)) return false;
  const visit = (path: string, st: Stats) => {
    lchownSync(path, st.uid, options.fsGroup);
    if (st.isSymbolicLink()) return;
    chmodSync(path, ownershipMode(st.mode, st.isDirectory(), options.readOnly ?? false));
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name), lstatSync(join(path, name)));
  };
  visit(dir, root);
  return true;
}
