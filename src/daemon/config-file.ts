// `--config FILE`: the daemon's flags from a YAML file (k3s' config.yaml), keys as the flags' names, flags on the command line win.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { UsageError } from './daemon-config.js';

/** Flags whose values are lists on the command line too (repeatable): kept as lists. */
const LIST_FLAGS = new Set(['tls-san']);

/** Where `--config FILE` (or `--config=FILE`) names the file in argv; undefined without one. */
export function configFileArg(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') return undefined;
    if (word === '--config') {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new UsageError('--config needs a file: --config /etc/minik8s/config.yaml');
      return next;
    }
    if (word.startsWith('--config=')) return word.slice('--config='.length);
  }
  return undefined;
}

/** A value as the command line would give it: numbers as text, lists comma-joined, maps (labels) as k=v,... */
function flagValue(path: string, key: string, value: unknown): unknown {
  if (typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) {
    const words = value.map((item) => {
      if (typeof item !== 'string' && typeof item !== 'number') throw new UsageError(`${path}: "${key}" must be a list of words, not of ${typeof item}s`);
      return String(item);
    });
    return LIST_FLAGS.has(key) ? words : words.join(',');
  }
  if (value !== null && typeof value === 'object') {
    // labels: {zone: a} and taints: {gpu: "yes:NoSchedule"} read as the flags' k=v lists.
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(',');
  }
  throw new UsageError(`${path}: "${key}" has no value`);
}

/**
 * Reads a YAML mapping of flag names to values. Unknown keys are left for the flag parser, which
 * refuses them as it refuses unknown flags; `role` may be given here like any flag.
 */
export function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--config: cannot read ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new UsageError(`--config: ${path} is not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new UsageError(`--config: ${path} must be a mapping of flag names to values (e.g. "server: https://10.0.0.1:6443")`);
  const flags: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    if (key === 'config') throw new UsageError(`--config: ${path} names another config file; one file is read`);
    flags[key] = flagValue(path, key, value);
  }
  return flags;
}
