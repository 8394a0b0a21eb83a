// Runs the compiled tests: unit tests beside the source, then integration tests in test/.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function find(dir) {
  let out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(find(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out.sort();
}

const unitOnly = process.argv.includes('--unit');
const files = [...find('dist/src'), ...find('dist/bin'), ...find('dist/scripts'), ...(unitOnly ? [] : find('dist/test'))];
// Integration tests share real daemons' ports and Docker: run files one at a time.
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
