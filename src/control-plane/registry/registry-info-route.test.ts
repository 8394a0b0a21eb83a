import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hono } from 'hono';
import { REGISTRY_INFO_PATH } from '../../core/api/activator-paths.js';
import { ApiError } from '../../core/errors.js';
import { registerRegistryInfoRoute } from './registry-info-route.js';

function app(registryPort: number | undefined): Hono {
  const a = new Hono();
  a.onError((err, c) => (err instanceof ApiError ? c.json({ kind: 'Status', code: err.code, message: err.message }, err.code as 404) : c.text('bad', 500)));
  registerRegistryInfoRoute(a, { registryPort });
  return a;
}

describe('registry info route', () => {
  it("answers the registry's port, which image import pushes to", async () => {
    const res = await app(5123).request(REGISTRY_INFO_PATH);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { apiVersion: 'minik8s.io/v1', kind: 'RegistryInfo', port: 5123 });
  });

  it('answers 404 saying so when the master runs no registry', async () => {
    const res = await app(undefined).request(REGISTRY_INFO_PATH);
    assert.equal(res.status, 404);
    assert.match(((await res.json()) as { message: string }).message, /runs no image registry/);
  });
});
