// auth can-i's review spec: groups from the kind list, names, URLs and unknown types.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reviewSpec } from './auth.js';
import { clusterInfoText } from './cluster-info.js';

describe('auth can-i', () => {
  it('names the group and resource of a known type', () => {
    const none = () => assert.fail('no warning expected');
    assert.deepEqual(reviewSpec({ verb: 'create', resource: 'deploy' }, 'ns', none), {
      resourceAttributes: { namespace: 'ns', verb: 'create', group: 'apps', resource: 'deployments' },
    });
    assert.deepEqual(reviewSpec({ verb: 'get', resource: 'pods/web', allNamespaces: true, subresource: 'log' }, 'ns', none), {
      resourceAttributes: { namespace: '', verb: 'get', group: '', resource: 'pods', name: 'web', subresource: 'log' },
    });
    assert.deepEqual(reviewSpec({ verb: 'get', resource: '/healthz' }, 'ns', none), { nonResourceAttributes: { verb: 'get', path: '/healthz' } });
  });

  it("warns as kubectl does about a type the server doesn't have, and still asks", () => {
    let warned = '';
    const spec = reviewSpec({ verb: 'list', resource: 'foos.example.com' }, 'd', (t) => {
      warned += t;
    });
    assert.equal(warned, "Warning: the server doesn't have a resource type 'foos.example.com'\n\n");
    assert.deepEqual(spec, { resourceAttributes: { namespace: 'd', verb: 'list', resource: 'foos', group: 'example.com' } });
  });
});

describe('cluster-info', () => {
  it('prints the control plane line and the cluster services, as kubectl does on a pipe', () => {
    assert.equal(
      clusterInfoText('https://127.0.0.1:6443/', [
        { metadata: { name: 'kube-dns', labels: { 'kubernetes.io/name': 'CoreDNS' } }, spec: { ports: [{ name: 'dns', port: 53 }] } },
      ]),
      'Kubernetes control plane is running at https://127.0.0.1:6443\n' +
        'CoreDNS is running at https://127.0.0.1:6443/api/v1/namespaces/kube-system/services/kube-dns:dns/proxy\n\n' +
        "To further debug and diagnose cluster problems, use 'minik8s cluster-info dump'.\n",
    );
  });
});
