// The version of this build, read once from package.json (so there is one place to bump it).
import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    // Compiled to dist/src/core/version.js: package.json is three levels up.
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export const VERSION = readVersion();

/** The body of `GET /version`, shaped like Kubernetes' version.Info. */
export function versionInfo(): Record<string, string> {
  const [major = '0', minor = '0'] = VERSION.split('.');
  return {
    major,
    minor,
    gitVersion: `v${VERSION}`,
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
    nodeVersion: process.version,
  };
}
