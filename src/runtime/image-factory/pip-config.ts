// Which package index a function's requirements install from: the master's --pip-index-url, else pip's own configuration on the master's machine (PIP_* environment, pip.conf files), rendered as a pip.conf for the build's dependency stage.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The part of pip's configuration that decides where packages come from (paths such as `cert` name files of the master's machine, not the build's). */
export interface PipIndexSettings {
  indexUrl?: string;
  extraIndexUrls: string[];
  trustedHosts: string[];
  /** Where the settings came from, for the master's log (never the URLs: they may hold a password). */
  sources: string[];
}

/** pip.conf files in the order pip reads them, later ones overriding: global, then user (legacy, then XDG). */
export function pipConfigFiles(env: NodeJS.ProcessEnv, home: string): { global: string[]; user: string[] } {
  const xdgDirs = (env.XDG_CONFIG_DIRS || '/etc/xdg').split(':').filter(Boolean);
  const xdgHome = env.XDG_CONFIG_HOME || join(home, '.config');
  return {
    global: [...xdgDirs.map((d) => join(d, 'pip', 'pip.conf')), '/etc/pip.conf'],
    user: [join(home, '.pip', 'pip.conf'), join(xdgHome, 'pip', 'pip.conf')],
  };
}

type Keys = Partial<Record<'index-url' | 'extra-index-url' | 'trusted-host', string>>;
const KEYS = new Set(['index-url', 'extra-index-url', 'trusted-host']);

/** The index keys of one pip.conf: `[global]`, then `[install]` over it (pip's command section); `_` and `-` alike, as pip reads them. */
export function parsePipConf(text: string): Keys {
  const sections: Record<string, Keys> = {};
  let section = '';
  let last: keyof Keys | undefined;
  for (const raw of text.split(/\r?\n/)) {
    if (/^\s*[#;]/.test(raw) || raw.trim() === '') continue;
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(raw);
    if (header) {
      section = header[1]!.trim().toLowerCase();
      last = undefined;
      continue;
    }
    // An indented line continues the previous value (how lists are written across lines).
    if (/^\s/.test(raw) && last) {
      const keys = sections[section]!;
      keys[last] = `${keys[last] ?? ''}\n${raw.trim()}`;
      continue;
    }
    const kv = /^\s*([^=:\s]+)\s*[=:]\s*(.*)$/.exec(raw);
    if (!kv) continue;
    const key = kv[1]!.toLowerCase().replace(/_/g, '-');
    last = KEYS.has(key) ? (key as keyof Keys) : undefined;
    if (!last) continue;
    sections[section] ??= {};
    sections[section][last] = kv[2]!.trim();
  }
  return { ...sections.global, ...sections.install };
}

const words = (s: string | undefined) => (s ?? '').split(/\s+/).filter(Boolean);

/** The host of a plain-HTTP index: pip refuses one unless told to trust it. */
function httpHost(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' ? u.hostname : undefined;
  } catch {
    return undefined;
  }
}

/**
 * pip's answer, resolved as pip does: config files in order (PIP_CONFIG_FILE after them, and
 * when it exists the user files are skipped), then PIP_INDEX_URL, PIP_EXTRA_INDEX_URL and
 * PIP_TRUSTED_HOST over them. The master's --pip-index-url, when given, is the whole answer.
 */
export function resolvePipSettings(o: { flagIndexUrl?: string; env: NodeJS.ProcessEnv; files: readonly { path: string; text?: string }[] }): PipIndexSettings {
  let keys: Keys = {};
  const sources: string[] = [];
  if (o.flagIndexUrl) {
    keys = { 'index-url': o.flagIndexUrl };
    sources.push('--pip-index-url');
  } else {
    for (const f of o.files) {
      if (f.text === undefined) continue;
      const found = parsePipConf(f.text);
      if (Object.keys(found).length === 0) continue;
      keys = { ...keys, ...found };
      sources.push(f.path);
    }
    const fromEnv: [keyof Keys, string][] = [
      ['index-url', 'PIP_INDEX_URL'],
      ['extra-index-url', 'PIP_EXTRA_INDEX_URL'],
      ['trusted-host', 'PIP_TRUSTED_HOST'],
    ];
    for (const [key, name] of fromEnv) {
      const value = o.env[name];
      if (value === undefined || value.trim() === '') continue;
      keys[key] = value;
      sources.push(name);
    }
  }
  const indexUrl = words(keys['index-url'])[0];
  const extraIndexUrls = words(keys['extra-index-url']);
  const trusted = new Set(words(keys['trusted-host']));
  for (const url of [indexUrl, ...extraIndexUrls]) {
    const host = url ? httpHost(url) : undefined;
    if (host) trusted.add(host);
  }
  return { ...(indexUrl ? { indexUrl } : {}), extraIndexUrls, trustedHosts: [...trusted], sources };
}

/** Reads the master's pip configuration (files that do not exist are skipped). */
export async function readPipSettings(o: { flagIndexUrl?: string; env?: NodeJS.ProcessEnv; home?: string } = {}): Promise<PipIndexSettings> {
  const env = o.env ?? process.env;
  const { global, user } = pipConfigFiles(env, o.home ?? homedir());
  const read = (path: string) =>
    readFile(path, 'utf8').then(
      (text) => ({ path, text }),
      () => ({ path, text: undefined as string | undefined }),
    );
  const configFile = env.PIP_CONFIG_FILE && env.PIP_CONFIG_FILE !== '/dev/null' ? await read(env.PIP_CONFIG_FILE) : undefined;
  const files = [
    ...(await Promise.all(global.map(read))),
    ...(configFile?.text !== undefined ? [] : await Promise.all(user.map(read))),
    ...(configFile ? [configFile] : []),
  ];
  return resolvePipSettings({ flagIndexUrl: o.flagIndexUrl, env, files: env.PIP_CONFIG_FILE === '/dev/null' ? [] : files });
}

/** True when pip would use its defaults (nothing to write). */
export function isDefaultPip(s: PipIndexSettings): boolean {
  return !s.indexUrl && s.extraIndexUrls.length === 0 && s.trustedHosts.length === 0;
}

/** The pip.conf the dependency stage installs with; it stays in that stage, never in the function image. */
export function renderPipConf(s: PipIndexSettings): string {
  const lines = ["# Generated by the minik8s image factory from the master's pip configuration.", '[global]'];
  if (s.indexUrl) lines.push(`index-url = ${s.indexUrl}`);
  if (s.extraIndexUrls.length) lines.push(`extra-index-url = ${s.extraIndexUrls.join(' ')}`);
  if (s.trustedHosts.length) lines.push(`trusted-host = ${s.trustedHosts.join(' ')}`);
  return `${lines.join('\n')}\n`;
}
