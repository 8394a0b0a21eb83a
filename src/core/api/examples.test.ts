// Every manifest in examples/ (run from the project root) parses and is valid for its kind, as users will apply it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { kindByApiVersion } from './registry.js';
import { validateObject } from './validate.js';

const dir = join(process.cwd(), 'examples');
const files = readdirSync(dir)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort();

describe('examples', () => {
  it('has the example of each kind users create', () => {
    for (const f of [
      'namespace.yaml',
      'pod.yaml',
      'pod-multi-container.yaml',
      'service.yaml',
      'service-nodeport.yaml',
      'replicaset.yaml',
      'deployment.yaml',
      'hpa.yaml',
    ]) {
      assert.ok(files.includes(f), `examples/${f} is missing`);
    }
  });

  for (const file of files) {
    it(`${file} is valid`, () => {
      const docs = parseAllDocuments(readFileSync(join(dir, file), 'utf8'));
      assert.ok(Array.isArray(docs) && docs.length > 0, 'at least one document');
      for (const doc of docs) {
        assert.deepEqual(doc.errors, []);
        const obj = doc.toJS() as { apiVersion: string; kind: string; metadata: { name: string } } | null;
        if (obj === null) continue;
        const def = kindByApiVersion(obj.apiVersion, obj.kind);
        assert.ok(def, `unknown kind ${obj.apiVersion} ${obj.kind}`);
        // The API server fills the namespace from the request path; validate as it would.
        const input = def.namespaced ? { ...obj, metadata: { namespace: 'default', ...obj.metadata } } : obj;
        validateObject(def, input);
      }
    });
  }
});
