// Services on a real master (etcd, API server, reconcilers): cluster IPs and node ports allocated once and kept across a restart, refused requests, kube-dns, and Endpoints following pods within a second; pods are bound to hand-made nodes and their status is written as a kubelet would.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Endpoints } from '../src/core/api/endpoints.js';
import type { Service } from '../src/core/api/service.js';
import type { Status } from '../src/core/errors.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';

interface Answer {
  status: number;
  /** The JSON answered, or the text where it is not JSON. */
  body: unknown;
}

const MERGE = 'application/merge-patch+json';
/** The bar: Endpoints follow a pod change within a second. */
const ENDPOINTS_DEADLINE_MS = 1000;

describe('services', () => {
  let master: MasterProcess;

  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer> => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master.token}`, 'content-type': contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed };
  };
  const ok = (a: Answer, status = 200) => {
    assert.equal(a.status, status, JSON.stringify(a.body));
    return a.body;
  };
  /** A 422's causes as `field: message`. */
  const invalid = (a: Answer): string[] => {
    assert.equal(a.status, 422, JSON.stringify(a.body));
    const status = a.body as Status;
    assert.equal(status.reason, 'Invalid');
    return status.details!.causes!.map((c) => `${c.field}: ${c.message}`);
  };
  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 60_000 });

  const createService = async (ns: string, name: string, spec: Record<string, unknown>) =>
    ok(await call('POST', `/api/v1/namespaces/${ns}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec }), 201) as Service;
  const services = async () => (ok(await call('GET', '/api/v1/services')) as { items: Service[] }).items;
  const endpoints = async (ns: string, name: string) => {
    const a = await call('GET', `/api/v1/namespaces/${ns}/endpoints/${name}`);
    return a.status === 200 ? (a.body as Endpoints) : undefined;
  };
  /** `ip:port` of the ready addresses, and of the not-ready ones, sorted. */
  const listed = async (ns: string, name: string) => {
    const ep = await endpoints(ns, name);
    const pairs = (key: 'addresses' | 'notReadyAddresses') =>
      (ep?.subsets ?? [])
        .flatMap((s) => (s[key] ?? []).flatMap((a) => (s.ports ?? []).map((p) => `${a.ip}:${p.port}`)))
        .sort()
        .join(',');
    return { ready: pairs('addresses'), notReady: pairs('notReadyAddresses'), exists: ep !== undefined };
  };
  /** Waits for the endpoints to read as wanted, within the deadline from `since`. */
  const endpointsBecome = async (ns: string, name: string, want: { ready: string; notReady?: string }, what: string) => {
    const since = Date.now();
    await waitFor(
      async () => {
        const now = await listed(ns, name);
        return now.exists && now.ready === want.ready && (want.notReady === undefined || now.notReady === want.notReady);
      },
      {
        timeoutMs: ENDPOINTS_DEADLINE_MS,
        intervalMs: 10,
        description: `endpoints ${ns}/${name} to be ${JSON.stringify(want)} (${what}); last: ${JSON.stringify(await listed(ns, name))}`,
      },
    );
    return Date.now() - since;
  };

  const makeNode = async (name: string) => {
    ok(await call('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } }), 201);
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const resources = { cpu: '4', memory: '8Gi', pods: '110' };
    ok(
      await call(
        'PATCH',
        `/api/v1/nodes/${name}/status`,
        {
          status: {
            capacity: resources,
            allocatable: resources,
            conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: now, lastTransitionTime: now }],
          },
        },
        MERGE,
      ),
    );
  };
  const makeNamespace = async (name: string) => ok(await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }), 201);
  /** A pod bound to a node, with a named container port. */
  const makePod = async (ns: string, name: string, node: string, labels: Record<string, string>, ports = [{ name: 'http', containerPort: 8080 }]) =>
    ok(
      await call('POST', `/api/v1/namespaces/${ns}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels },
        spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox:1.35', ports }] },
      }),
      201,
    );
  /** What a kubelet reports: Running with an IP, Ready or not. */
  const setStatus = async (ns: string, name: string, ip: string, ready: boolean) =>
    ok(
      await call(
        'PATCH',
        `/api/v1/namespaces/${ns}/pods/${name}/status`,
        {
          status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
        },
        MERGE,
      ),
    );

  before(async () => {
    master = await startMaster({ registry: false });
    for (const name of ['n1', 'n2']) await makeNode(name);
  });
  after(async () => {
    await master?.stop();
  });

  it('has kube-system/kube-dns at 10.96.0.10, with no selector and no endpoints', async () => {
    const dns = ok(await call('GET', '/api/v1/namespaces/kube-system/services/kube-dns')) as Service;
    assert.equal(dns.spec.clusterIP, '10.96.0.10');
    assert.equal(dns.metadata.labels?.['k8s-app'], 'kube-dns');
    assert.deepEqual(
      dns.spec.ports.map((p) => `${p.name} ${p.port}/${p.protocol}`),
      ['dns 53/UDP', 'dns-tcp 53/TCP'],
    );
    assert.equal(dns.spec.selector, undefined);
    assert.equal(await endpoints('kube-system', 'kube-dns'), undefined);
    // The allocator holds the address: nobody else may ask for it.
    await makeNamespace('dns-check');
    assert.deepEqual(
      invalid(
        await call('POST', '/api/v1/namespaces/dns-check/services', { metadata: { name: 'x' }, spec: { clusterIP: '10.96.0.10', ports: [{ port: 53 }] } }),
      ),
      ['spec.clusterIP: Invalid value: "10.96.0.10": provided IP is reserved for the kube-system/kube-dns service'],
    );
  });

  it('gives 50 services 50 addresses (and node ports), keeps them across a master restart and never gives them again', async () => {
    await makeNamespace('many');
    const made = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        createService('many', `s${i}`, {
          type: i % 2 ? 'NodePort' : 'ClusterIP',
          selector: { app: `s${i}` },
          ports: [{ port: 80 }],
        }),
      ),
    );
    const ips = made.map((s) => s.spec.clusterIP!);
    assert.equal(new Set([...ips, '10.96.0.10']).size, 51, 'unique, and none is the DNS address');
    for (const ip of ips) assert.match(ip, /^10\.96\.\d+\.\d+$/);
    const ports = made.flatMap((s) => s.spec.ports.map((p) => p.nodePort).filter(Boolean));
    assert.equal(new Set(ports).size, 25);
    for (const p of ports) assert.ok(p! >= 30000 && p! <= 32767, String(p));

    await master.kill();
    await master.restart();
    const after = (await services()).filter((s) => s.metadata.namespace === 'many');
    assert.deepEqual(after.map((s) => s.spec.clusterIP).sort(), [...ips].sort(), 'the same addresses after the restart');
    const dns = ok(await call('GET', '/api/v1/namespaces/kube-system/services/kube-dns')) as Service;
    assert.equal(dns.spec.clusterIP, '10.96.0.10');
    const more = await Promise.all(Array.from({ length: 20 }, (_, i) => createService('many', `t${i}`, { type: 'NodePort', ports: [{ port: 80 }] })));
    for (const s of more) {
      assert.ok(!ips.includes(s.spec.clusterIP!), `${s.spec.clusterIP} was given again`);
      assert.ok(!ports.includes(s.spec.ports[0]!.nodePort), `${s.spec.ports[0]!.nodePort} was given again`);
    }
  });

  it("frees a deleted service's address and node port for the next one that asks", async () => {
    await makeNamespace('free');
    const a = await createService('free', 'a', { type: 'NodePort', ports: [{ port: 80 }] });
    const ip = a.spec.clusterIP!;
    const port = a.spec.ports[0]!.nodePort!;
    assert.deepEqual(
      invalid(
        await call('POST', '/api/v1/namespaces/free/services', {
          metadata: { name: 'b' },
          spec: { clusterIP: ip, type: 'NodePort', ports: [{ port: 80, nodePort: port }] },
        }),
      ),
      [
        `spec.clusterIP: Invalid value: "${ip}": provided IP is already allocated`,
        `spec.ports[0].nodePort: Invalid value: ${port}: provided port is already allocated`,
      ],
    );
    ok(await call('DELETE', '/api/v1/namespaces/free/services/a'));
    const b = await createService('free', 'b', { clusterIP: ip, type: 'NodePort', ports: [{ port: 80, nodePort: port }] });
    assert.equal(b.spec.clusterIP, ip);
    assert.equal(b.spec.ports[0]!.nodePort, port);
  });

  it('refuses what cannot be granted with 422 and the field, writing nothing', async () => {
    await makeNamespace('bad');
    // Earlier tests allocated node ports and addresses at random: ask only for values none of them holds.
    const taken = await services();
    const usedPorts = new Set(taken.flatMap((x) => x.spec.ports.map((p) => p.nodePort)));
    const usedIPs = new Set(taken.map((x) => x.spec.clusterIP));
    const [P1, P2] = Array.from({ length: 100 }, (_, i) => 30999 - i).filter((p) => !usedPorts.has(p));
    const IP = Array.from({ length: 50 }, (_, i) => `10.96.200.${200 + i}`).find((ip) => !usedIPs.has(ip))!;
    const s = await createService('bad', 'web', { type: 'NodePort', ports: [{ name: 'http', port: 80, nodePort: P1 }] });
    const post = (name: string, spec: Record<string, unknown>) => call('POST', '/api/v1/namespaces/bad/services', { metadata: { name }, spec });
    assert.deepEqual(invalid(await post('out', { clusterIP: '10.0.0.5', ports: [{ port: 80 }] })), [
      'spec.clusterIP: Invalid value: "10.0.0.5": provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/16',
    ]);
    assert.deepEqual(invalid(await post('range', { type: 'NodePort', ports: [{ port: 80, nodePort: 40000 }] })), [
      'spec.ports[0].nodePort: Invalid value: 40000: provided port is not in the valid range. The range of valid ports is 30000-32767',
    ]);
    assert.deepEqual(invalid(await post('taken', { type: 'NodePort', ports: [{ port: 80, nodePort: P1 }] })), [
      `spec.ports[0].nodePort: Invalid value: ${P1}: provided port is already allocated`,
    ]);
    assert.deepEqual(invalid(await call('PATCH', '/api/v1/namespaces/bad/services/web', { spec: { clusterIP: IP } }, MERGE)), [
      `spec.clusterIP: Invalid value: "${IP}": field is immutable`,
    ]);
    assert.deepEqual(
      invalid(await call('PATCH', '/api/v1/namespaces/bad/services/web', { spec: { ports: [{ name: 'http', port: 80, nodePort: P2 }] } }, MERGE)),
      [`spec.ports[0].nodePort: Invalid value: ${P2}: field is immutable`],
    );
    // Nothing of the refused ones exists, and the one that does is as it was.
    assert.deepEqual(
      (await services()).filter((x) => x.metadata.namespace === 'bad').map((x) => x.metadata.name),
      ['web'],
    );
    const now = ok(await call('GET', '/api/v1/namespaces/bad/services/web')) as Service;
    assert.equal(now.metadata.resourceVersion, s.metadata.resourceVersion);
    // The two refused requests for free values did not take them either.
    const c = await createService('bad', 'c', { clusterIP: IP, type: 'NodePort', ports: [{ port: 80, nodePort: P2 }] });
    assert.equal(c.spec.clusterIP, IP);
    // Switching to ClusterIP frees the node port.
    ok(await call('PATCH', '/api/v1/namespaces/bad/services/c', { spec: { type: 'ClusterIP' } }, MERGE));
    await createService('bad', 'd', { type: 'NodePort', ports: [{ port: 80, nodePort: P2 }] });
  });

  it('keeps Endpoints in step with pods within a second: ready, not ready, a new replica, a deleted one', async () => {
    await makeNamespace('ep');
    await createService('ep', 'web', { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] });
    // A selector matching nothing yet: Endpoints with no subsets.
    await waitFor(async () => (await endpoints('ep', 'web'))?.subsets?.length === 0, { timeoutMs: 5000, description: 'empty endpoints' });
    const timings: number[] = [];
    await makePod('ep', 'a', 'n1', { app: 'web' });
    await setStatus('ep', 'a', '10.244.1.5', false);
    timings.push(await endpointsBecome('ep', 'web', { ready: '', notReady: '10.244.1.5:8080' }, 'a running, not ready'));
    await setStatus('ep', 'a', '10.244.1.5', true);
    timings.push(await endpointsBecome('ep', 'web', { ready: '10.244.1.5:8080', notReady: '' }, 'a ready'));
    // A replica added, with the named port on another number.
    await makePod('ep', 'b', 'n2', { app: 'web' }, [{ name: 'http', containerPort: 9090 }]);
    await setStatus('ep', 'b', '10.244.2.7', true);
    timings.push(await endpointsBecome('ep', 'web', { ready: '10.244.1.5:8080,10.244.2.7:9090' }, 'b joins, its named port resolved'));
    const ep = await endpoints('ep', 'web');
    const b = ep!.subsets!.flatMap((s) => s.addresses ?? []).find((a) => a.ip === '10.244.2.7')!;
    assert.equal(b.nodeName, 'n2');
    assert.deepEqual([b.targetRef?.kind, b.targetRef?.name], ['Pod', 'b']);
    // Failing readiness.
    await setStatus('ep', 'b', '10.244.2.7', false);
    timings.push(await endpointsBecome('ep', 'web', { ready: '10.244.1.5:8080', notReady: '10.244.2.7:9090' }, 'b fails'));
    // Deleted with a grace period: out of the rotation at once, before it stops.
    ok(await call('DELETE', '/api/v1/namespaces/ep/pods/a'));
    assert.equal((await call('GET', '/api/v1/namespaces/ep/pods/a')).status, 200, 'a is still terminating');
    timings.push(await endpointsBecome('ep', 'web', { ready: '', notReady: '10.244.2.7:9090' }, 'a deleted'));
    // A pod that does not declare the port name is left out, with a warning on the service.
    await makePod('ep', 'c', 'n1', { app: 'web' }, [{ name: 'other', containerPort: 7070 }]);
    await setStatus('ep', 'c', '10.244.1.9', true);
    await waitFor(
      async () => {
        const events = ok(await call('GET', '/api/v1/namespaces/ep/events?fieldSelector=involvedObject.name=web')) as {
          items: { reason: string; message: string }[];
        };
        return events.items.find((e) => e.reason === 'FailedToResolvePort' && e.message.includes('pod c'));
      },
      { timeoutMs: 5000, description: 'a FailedToResolvePort event naming pod c' },
    );
    assert.deepEqual(await listed('ep', 'web'), { ready: '', notReady: '10.244.2.7:9090', exists: true });
    // The service's selector changes: its endpoints follow.
    ok(await call('PATCH', '/api/v1/namespaces/ep/services/web', { spec: { selector: { app: 'web', track: 'canary' } } }, MERGE));
    timings.push(await endpointsBecome('ep', 'web', { ready: '', notReady: '' }, 'selector narrowed'));
    // Deleting the service deletes its Endpoints.
    ok(await call('DELETE', '/api/v1/namespaces/ep/services/web'));
    await waitFor(async () => (await endpoints('ep', 'web')) === undefined, {
      timeoutMs: ENDPOINTS_DEADLINE_MS,
      description: 'endpoints deleted with their service',
    });
    process.stderr.write(`endpoints followed pod changes in ${timings.join(', ')} ms\n`);
  });

  it('prints services and endpoints as kubectl does', async () => {
    await makeNamespace('print');
    await createService('print', 'web', { type: 'NodePort', selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30080 }] });
    for (const [i, ip] of ['10.244.1.5', '10.244.2.7', '10.244.3.2', '10.244.3.9'].entries()) {
      await makePod('print', `p${i}`, 'n1', { app: 'web' });
      await setStatus('print', `p${i}`, ip, true);
    }
    await endpointsBecome('print', 'web', { ready: '10.244.1.5:8080,10.244.2.7:8080,10.244.3.2:8080,10.244.3.9:8080' }, 'four ready pods');
    const svc = ok(await call('GET', '/api/v1/namespaces/print/services/web')) as Service;
    const svcTable = cli('get', 'svc', '-n', 'print');
    assert.equal(svcTable.status, 0, svcTable.stderr);
    const [header, row] = svcTable.stdout.trim().split('\n');
    assert.match(header!, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/);
    assert.match(row!, new RegExp(`^web\\s+NodePort\\s+${svc.spec.clusterIP!.replace(/\./g, '\\.')}\\s+<none>\\s+80:30080/TCP\\s+\\d+s$`));
    const epTable = cli('get', 'endpoints', '-n', 'print');
    assert.equal(epTable.status, 0, epTable.stderr);
    const [epHeader, epRow] = epTable.stdout.trim().split('\n');
    assert.match(epHeader!, /^NAME\s+ENDPOINTS\s+AGE$/);
    assert.match(epRow!, /^web\s+10\.244\.1\.5:8080,10\.244\.2\.7:8080,10\.244\.3\.2:8080 \+ 1 more\.\.\.\s+\d+s$/);
    const described = cli('describe', 'svc', 'web', '-n', 'print');
    assert.equal(described.status, 0, described.stderr);
    assert.match(described.stdout, new RegExp(`IP:\\s+${svc.spec.clusterIP!.replace(/\./g, '\\.')}\\n`));
    assert.match(described.stdout, /Port:\s+http {2}80\/TCP\n/);
    assert.match(described.stdout, /NodePort:\s+http {2}30080\/TCP\n/);
    assert.match(described.stdout, /Endpoints:\s+10\.244\.1\.5:8080,10\.244\.2\.7:8080,10\.244\.3\.2:8080 \+ 1 more\.\.\.\n/);
    const dns = cli('get', 'svc', 'kube-dns', '-n', 'kube-system');
    assert.match(dns.stdout, /kube-dns\s+ClusterIP\s+10\.96\.0\.10\s+<none>\s+53\/UDP,53\/TCP/);
  });
});
