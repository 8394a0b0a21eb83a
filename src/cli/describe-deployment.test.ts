// `describe deployment`: kubectl's layout, column for column, with its ReplicaSets split into new and old.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Deployment } from '../core/api/deployment.js';
import type { Event } from '../core/api/event.js';
import type { ReplicaSet } from '../core/api/replicaset.js';
import { describeDeployment, formatLabelSelector, splitOwnedReplicaSets } from './describe-deployment.js';

const now = new Date('2026-11-26T08:00:00Z');
const template = {
  metadata: { labels: { app: 'web' } },
  spec: {
    containers: [
      {
        name: 'nginx',
        image: 'nginx:1.27',
        ports: [{ containerPort: 80, protocol: 'TCP' }],
        env: [{ name: 'MODE', value: 'prod' }],
        volumeMounts: [{ name: 'cache', mountPath: '/cache' }],
      },
    ],
    volumes: [{ name: 'cache', emptyDir: {} }],
  },
};
const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'default',
    uid: 'd-1',
    creationTimestamp: '2026-11-26T07:00:00Z',
    labels: { app: 'web' },
    annotations: { 'deployment.kubernetes.io/revision': '2', 'minik8s.io/last-applied-configuration': '{}' },
  },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
    minReadySeconds: 0,
  },
  status: {
    replicas: 3,
    updatedReplicas: 3,
    availableReplicas: 3,
    unavailableReplicas: 0,
    conditions: [
      { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
      { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
    ],
  },
} as unknown as Deployment;

function rs(name: string, created: string, tmpl: unknown, replicas: number, owner = 'd-1'): ReplicaSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: 'default',
      creationTimestamp: created,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: owner, controller: true }],
    },
    spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: tmpl },
    status: { replicas },
  } as unknown as ReplicaSet;
}

const hashed = (t: typeof template, hash: string) => ({ ...t, metadata: { labels: { ...t.metadata.labels, 'pod-template-hash': hash } } });
const newRs = rs('web-7d4b9c', '2026-11-26T07:30:00Z', hashed(template, '7d4b9c'), 3);
const oldRs = rs('web-55f6d8', '2026-11-26T07:00:00Z', hashed({ ...template, spec: { ...template.spec, containers: [] } } as never, '55f6d8'), 0);
const event = {
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: 'web.1', namespace: 'default' },
  involvedObject: { kind: 'Deployment', name: 'web', namespace: 'default' },
  type: 'Normal',
  reason: 'ScalingReplicaSet',
  message: 'Scaled up replica set web-7d4b9c to 3',
  source: { component: 'deployment-controller' },
  lastTimestamp: '2026-11-26T07:58:00Z',
} as unknown as Event;

describe('describe deployment', () => {
  it('prints every section aligned as kubectl does', () => {
    assert.equal(
      describeDeployment({ deployment, replicaSets: [newRs, oldRs], events: [event], now }),
      [
        'Name:                   web',
        'Namespace:              default',
        'CreationTimestamp:      Thu, 26 Nov 2026 07:00:00 +0000',
        'Labels:                 app=web',
        'Annotations:            deployment.kubernetes.io/revision: 2',
        'Selector:               app=web',
        'Replicas:               3 desired | 3 updated | 3 total | 3 available | 0 unavailable',
        'StrategyType:           RollingUpdate',
        'MinReadySeconds:        0',
        'RollingUpdateStrategy:  25% max unavailable, 25% max surge',
        'Pod Template:',
        '  Labels:  app=web',
        '  Containers:',
        '   nginx:',
        '    Image:      nginx:1.27',
        '    Port:       80/TCP',
        '    Host Port:  0/TCP',
        '    Environment:',
        '      MODE:  prod',
        '    Mounts:',
        '      /cache from cache (rw)',
        '  Volumes:',
        '   cache:',
        "    Type:          EmptyDir (a temporary directory that shares a pod's lifetime)",
        '    Medium:        ',
        '    SizeLimit:     <unset>',
        '  Node-Selectors:  <none>',
        '  Tolerations:     <none>',
        'Conditions:',
        '  Type           Status  Reason',
        '  ----           ------  ------',
        '  Available      True    MinimumReplicasAvailable',
        '  Progressing    True    NewReplicaSetAvailable',
        'OldReplicaSets:  <none>',
        'NewReplicaSet:   web-7d4b9c (3/3 replicas created)',
        'Events:',
        '  Type    Reason             Age   From                   Message',
        '  ----    ------             ----  ----                   -------',
        '  Normal  ScalingReplicaSet  2m    deployment-controller  Scaled up replica set web-7d4b9c to 3',
        '',
      ].join('\n'),
    );
  });

  it('lines up the template fields with Volumes and Node-Selectors when nothing breaks the block', () => {
    const bare = {
      ...deployment,
      spec: { ...deployment.spec, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
    };
    const text = describeDeployment({ deployment: bare as unknown as Deployment, events: [], now });
    assert.match(
      text,
      / {3}c:\n {4}Image: {9}busybox\n {4}Port: {10}<none>\n {4}Host Port: {5}<none>\n {4}Environment: {3}<none>\n {4}Mounts: {8}<none>\n {2}Volumes: {9}<none>\n {2}Node-Selectors: {2}<none>\n {2}Tolerations: {5}<none>\n/,
    );
    // Without readable ReplicaSets those lines are left out; `Events: <none>` joins the conditions' block.
    assert.doesNotMatch(text, /ReplicaSets?:/);
    assert.match(text, /\nEvents: {9}<none>\n$/);
  });

  it("prints each container's probes as kubectl does, after its resources and before its environment", () => {
    const container = {
      name: 'api',
      image: 'api:1',
      resources: { limits: { cpu: '500m' } },
      livenessProbe: { tcpSocket: { port: 8080 }, initialDelaySeconds: 5, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
      readinessProbe: { httpGet: { path: '/', port: 8080, scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
      startupProbe: { exec: { command: ['cat', '/tmp/ready'] }, timeoutSeconds: 2, periodSeconds: 5, successThreshold: 1, failureThreshold: 30 },
    };
    const probed = { ...deployment, spec: { ...deployment.spec, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [container] } } } };
    const text = describeDeployment({ deployment: probed as unknown as Deployment, events: [], now });
    const want = [
      '    Limits:',
      '      cpu:         500m',
      '    Liveness:      tcp-socket :8080 delay=5s timeout=1s period=10s #success=1 #failure=3',
      '    Readiness:     http-get http://:8080/ delay=0s timeout=1s period=10s #success=1 #failure=3',
      '    Startup:       exec [cat /tmp/ready] delay=0s timeout=2s period=5s #success=1 #failure=30',
      '    Environment:   <none>',
    ].join('\n');
    assert.ok(text.includes(want), text);
  });

  it('splits owned ReplicaSets into the new one and old ones that still have pods', () => {
    const stale = rs('web-old', '2026-11-26T06:00:00Z', hashed({ ...template, metadata: { labels: { app: 'x' } } } as never, 'o'), 1);
    const foreign = rs('other', '2026-11-26T06:00:00Z', hashed(template, 'f'), 1, 'someone-else');
    const split = splitOwnedReplicaSets(deployment, [newRs, oldRs, stale, foreign]);
    assert.equal(split.newRs?.metadata.name, 'web-7d4b9c');
    assert.deepEqual(
      split.old.map((r) => r.metadata.name),
      ['web-old'],
    );
  });

  it('formats selectors as kubectl does', () => {
    assert.equal(
      formatLabelSelector({ matchLabels: { b: '2', a: '1' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['y', 'x'] }] }),
      'a=1,b=2,tier in (x,y)',
    );
    assert.equal(formatLabelSelector({}), '<none>');
  });
});
