// `minik8s top`: kubectl's columns from metrics (pure), and the command against a small canned HTTP server.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Node } from '../core/api/node.js';
import { runCli } from './main.js';
import { formatCpu, formatMemory, nodeTopRows, podTopRows, topResource } from './top.js';

const podMetrics = (namespace: string, name: string, containers: [string, string][]) => ({
  kind: 'PodMetrics',
  metadata: { name, namespace },
  containers: containers.map(([cpu, memory], i) => ({ name: `c${i}`, usage: { cpu, memory } })),
});
const node = (name: string, allocatable?: Record<string, string>) =>
  ({ kind: 'Node', metadata: { name }, spec: {}, status: allocatable ? { allocatable } : {} }) as unknown as Node;

describe('top rows', () => {
  it('sums containers per pod and prints millicores and MiB', () => {
    const items = [
      podMetrics('b', 'web', [
        ['12m', '3456Ki'],
        ['1500000n', '2Mi'],
      ]),
      podMetrics('a', 'db', [['1', '1Gi']]),
    ];
    assert.deepEqual(podTopRows(items, {}), [
      ['NAME', 'CPU(cores)', 'MEMORY(bytes)'],
      ['db', '1000m', '1024Mi'],
      ['web', '14m', '5Mi'],
    ]);
    assert.deepEqual(podTopRows(items, { allNamespaces: true, noHeaders: true })[0], ['a', 'db', '1000m', '1024Mi']);
  });

  it('shows node use against allocatable, and <unknown> without metrics', () => {
    const rows = nodeTopRows(
      [node('n2', { cpu: '2', memory: '4Gi' }), node('n1', { cpu: '500m', memory: '1Gi' }), node('n3')],
      [
        { metadata: { name: 'n1' }, usage: { cpu: '250m', memory: '256Mi' } },
        { metadata: { name: 'n2' }, usage: { cpu: '1999m', memory: '1Gi' } },
        { metadata: { name: 'n3' }, usage: { cpu: '1m', memory: '1Mi' } },
      ],
    );
    assert.deepEqual(rows, [
      ['NAME', 'CPU(cores)', 'CPU%', 'MEMORY(bytes)', 'MEMORY%'],
      ['n1', '250m', '50%', '256Mi', '25%'],
      ['n2', '1999m', '99%', '1024Mi', '25%'],
      ['n3', '1m', '<unknown>', '1Mi', '<unknown>'],
    ]);
    assert.deepEqual(nodeTopRows([node('n9')], [], { noHeaders: true }), [['n9', '<unknown>', '<unknown>', '<unknown>', '<unknown>']]);
  });

  it('names resources and formats figures', () => {
    assert.deepEqual(['po', 'pods', 'pod', 'no', 'node', 'NODES'].map(topResource), ['pods', 'pods', 'pods', 'nodes', 'nodes', 'nodes']);
    assert.throws(() => topResource('svc'), /unknown resource "svc"/);
    assert.throws(() => topResource(undefined), /needs a resource/);
    assert.equal(formatCpu(0.4), '0m');
    assert.equal(formatMemory(1024 * 1024 * 1.9), '1Mi');
  });
});

describe('minik8s top', () => {
  let server: http.Server;
  let url: string;
  let metricsServed = true;

  before(async () => {
    server = http.createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      const send = (code: number, body: unknown) => {
        res.writeHead(code, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const notFound = (message = 'the server could not find the requested resource') =>
        send(404, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 404, reason: 'NotFound', message });
      const m = '/apis/metrics.k8s.io/v1beta1';
      if (u.pathname.startsWith(m) && !metricsServed) return notFound();
      switch (u.pathname) {
        case `${m}/namespaces/default/pods`:
          return send(200, { kind: 'PodMetricsList', items: [podMetrics('default', 'web', [['12m', '3456Ki']])] });
        case `${m}/namespaces/empty/pods`:
          return send(200, { kind: 'PodMetricsList', items: [] });
        case `${m}/pods`:
          return send(200, {
            kind: 'PodMetricsList',
            items: [podMetrics('kube-system', 'dns', [['3m', '10Mi']]), podMetrics('default', 'web', [['12m', '3456Ki']])],
          });
        case `${m}/namespaces/default/pods/gone`:
          return notFound('podmetrics.metrics.k8s.io "default/gone" not found');
        case `${m}/nodes`:
          return send(200, { kind: 'NodeMetricsList', items: [{ metadata: { name: 'n1' }, usage: { cpu: '250m', memory: '512Mi' } }] });
        case '/api/v1/nodes':
          return send(200, { kind: 'NodeList', metadata: {}, items: [node('n1', { cpu: '2', memory: '2Gi' }), node('n2', { cpu: '2', memory: '2Gi' })] });
        default:
          return notFound();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const cli = async (args: string[]) => {
    let out = '';
    let err = '';
    const code = await runCli(['--server', url, ...args], {
      stdout: (s) => {
        out += s;
      },
      stderr: (s) => {
        err += s;
      },
      stdin: Readable.from([]),
      env: {},
    });
    return { code, out, err };
  };

  it('prints pods of the namespace or of all', async () => {
    assert.deepEqual(await cli(['top', 'pods']), { code: 0, out: 'NAME   CPU(cores)   MEMORY(bytes)\nweb    12m          3Mi\n', err: '' });
    assert.deepEqual(await cli(['top', 'pod', '-A']), {
      code: 0,
      out: 'NAMESPACE     NAME   CPU(cores)   MEMORY(bytes)\ndefault       web    12m          3Mi\nkube-system   dns    3m           10Mi\n',
      err: '',
    });
    assert.deepEqual(await cli(['top', 'pods', '-n', 'empty']), { code: 0, out: '', err: 'No resources found in empty namespace.\n' });
    assert.deepEqual(await cli(['top', 'pods', 'gone']), {
      code: 1,
      out: '',
      err: 'Error from server (NotFound): podmetrics.metrics.k8s.io "default/gone" not found\n',
    });
  });

  it('prints nodes with percentages', async () => {
    assert.deepEqual(await cli(['top', 'nodes']), {
      code: 0,
      out: 'NAME   CPU(cores)   CPU%        MEMORY(bytes)   MEMORY%\nn1     250m         12%         512Mi           25%\nn2     <unknown>    <unknown>   <unknown>       <unknown>\n',
      err: '',
    });
  });

  it('says when the metrics API is missing', async () => {
    metricsServed = false;
    try {
      assert.deepEqual(await cli(['top', 'pods']), { code: 1, out: '', err: 'error: Metrics API not available\n' });
      assert.deepEqual(await cli(['top', 'nodes']), { code: 1, out: '', err: 'error: Metrics API not available\n' });
    } finally {
      metricsServed = true;
    }
    assert.match((await cli(['top', 'services'])).err, /^error: unknown resource "services"/);
  });
});
