// --from-literal and --from-file, as kubectl's create secret and create configmap read them: each entry handed to the caller's add(key, bytes).
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { CliError } from './cli-error.js';

export interface KeySourceOptions {
  /** For a directory: whether one of its files becomes a key (kubectl's configmap skips names that are no valid key). */
  takesFile?: (name: string) => boolean;
}

/** Literals first, then files (a directory's files in name order); add() throws the caller's errors for bad or repeated keys. */
export async function readKeySources(
  fromLiteral: readonly string[],
  fromFile: readonly string[],
  add: (key: string, value: Buffer) => void,
  options: KeySourceOptions = {},
): Promise<void> {
  for (const pair of fromLiteral) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliError(`invalid literal source ${pair}, expected key=value`);
    add(pair.slice(0, eq), Buffer.from(pair.slice(eq + 1)));
  }
  for (const source of fromFile) {
    const eq = source.indexOf('=');
    const [key, path] = eq > 0 ? [source.slice(0, eq), source.slice(eq + 1)] : [undefined, source];
    const info = await stat(path).catch(() => {
      throw new CliError(`error reading ${path}: no such file or directory`);
    });
    if (info.isDirectory()) {
      if (key) throw new CliError('cannot give a key name for a directory path');
      for (const entry of (await readdir(path, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
        if (entry.isFile() && (options.takesFile?.(entry.name) ?? true)) add(entry.name, await readFile(join(path, entry.name)));
      }
    } else {
      add(key ?? basename(path), await readFile(path));
    }
  }
}
