// Every filter, table-driven: a node (with pods already on it), an incoming pod, and the reasons kube-scheduler would give.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Toleration } from '../../core/api/pod.js';
import {
  filterContext,
  hostPortsFree,
  interPodAffinity,
  nodeAffinity,
  nodeReady,
  nodeSchedulable,
  REASONS,
  resourcesFit,
  runFilters,
  taintsTolerated,
  type Filter,
} from './filters.js';
import { affinityState } from './inter-pod-affinity.js';
import { podInfo } from './pod-info.js';
import { cacheOf, node, pod, sameNodeTerm, type FixtureNode, type FixturePod } from './scheduler-fixtures.js';
import { toleratesTaint } from '../../core/api/taints.js';

interface Case {
  name: string;
  node: FixtureNode;
  /** Other nodes in the cluster. */
  others?: FixtureNode[];
  /** Pods already bound (to the node unless they name another). */
  existing?: FixturePod[];
  pod: FixturePod;
  want: string[];
}

function run(filter: Filter, cases: readonly Case[]): void {
  for (const c of cases) {
    it(c.name, () => {
      const cache = cacheOf(
        [node(c.node), ...(c.others ?? []).map(node)],
        (c.existing ?? []).map((p) => pod({ ...p, nodeName: p.nodeName ?? c.node.name })),
      );
      const info = podInfo(pod(c.pod));
      const ctx = filterContext(info);
      ctx.affinity = affinityState(info, cache);
      assert.deepEqual([...filter(ctx, cache.nodeOf(c.node.name)!)], c.want);
    });
  }
}

const taint = (key: string, effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute', value?: string) => ({
  key,
  effect,
  ...(value !== undefined ? { value } : {}),
});

describe("tolerates (Kubernetes' ToleratesTaint)", () => {
  const cases: [string, Toleration, ReturnType<typeof taint>, boolean][] = [
    ['Equal with the same value', { key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }, taint('k', 'NoSchedule', 'v'), true],
    ['Equal with another value', { key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }, taint('k', 'NoSchedule', 'w'), false],
    ['no operator means Equal', { key: 'k', value: 'v' }, taint('k', 'NoExecute', 'v'), true],
    ['Equal with no value matches a taint with none', { key: 'k', operator: 'Equal' }, taint('k', 'NoSchedule'), true],
    ['Exists ignores the value', { key: 'k', operator: 'Exists' }, taint('k', 'NoSchedule', 'anything'), true],
    ['another key', { key: 'j', operator: 'Exists' }, taint('k', 'NoSchedule'), false],
    ['empty key with Exists tolerates every taint', { operator: 'Exists' }, taint('any', 'NoExecute', 'x'), true],
    ['empty effect matches every effect', { key: 'k', operator: 'Exists', effect: '' }, taint('k', 'NoExecute'), true],
    ['another effect', { key: 'k', operator: 'Exists', effect: 'NoSchedule' }, taint('k', 'NoExecute'), false],
  ];
  for (const [name, t, tt, want] of cases) it(name, () => assert.equal(toleratesTaint(t, tt), want));
});

describe('nodeReady', () =>
  run(nodeReady, [
    { name: 'a Ready node fits', node: { name: 'n1' }, pod: { name: 'p' }, want: [] },
    { name: 'a node not Ready does not', node: { name: 'n1', ready: false }, pod: { name: 'p' }, want: [REASONS.notReady] },
    {
      name: 'unless the pod tolerates not-ready',
      node: { name: 'n1', ready: false },
      pod: { name: 'p', tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }] },
      want: [],
    },
  ]));

describe('nodeSchedulable', () =>
  run(nodeSchedulable, [
    { name: 'schedulable', node: { name: 'n1' }, pod: { name: 'p' }, want: [] },
    { name: 'cordoned', node: { name: 'n1', unschedulable: true }, pod: { name: 'p' }, want: [REASONS.unschedulable] },
    {
      name: 'cordoned, tolerated',
      node: { name: 'n1', unschedulable: true },
      pod: { name: 'p', tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] },
      want: [],
    },
  ]));

describe('taintsTolerated', () =>
  run(taintsTolerated, [
    { name: 'no taints', node: { name: 'n1' }, pod: { name: 'p' }, want: [] },
    {
      name: 'NoSchedule untolerated, with an empty value shown as Kubernetes shows it',
      node: { name: 'n1', taints: [taint('node-role.kubernetes.io/control-plane', 'NoSchedule')] },
      pod: { name: 'p' },
      want: ['node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }'],
    },
    {
      name: 'NoExecute untolerated',
      node: { name: 'n1', taints: [taint('gpu', 'NoExecute', 'yes')] },
      pod: { name: 'p' },
      want: ['node(s) had untolerated taint {gpu: yes}'],
    },
    { name: 'PreferNoSchedule is only a preference', node: { name: 'n1', taints: [taint('spot', 'PreferNoSchedule')] }, pod: { name: 'p' }, want: [] },
    {
      name: 'tolerated by Equal',
      node: { name: 'n1', taints: [taint('gpu', 'NoSchedule', 'yes')] },
      pod: { name: 'p', tolerations: [{ key: 'gpu', operator: 'Equal', value: 'yes', effect: 'NoSchedule' }] },
      want: [],
    },
    {
      name: 'a toleration for another effect does not help',
      node: { name: 'n1', taints: [taint('gpu', 'NoExecute', 'yes')] },
      pod: { name: 'p', tolerations: [{ key: 'gpu', operator: 'Equal', value: 'yes', effect: 'NoSchedule' }] },
      want: ['node(s) had untolerated taint {gpu: yes}'],
    },
    {
      name: 'the first untolerated taint is named',
      node: { name: 'n1', taints: [taint('a', 'NoSchedule'), taint('b', 'NoSchedule', '1')] },
      pod: { name: 'p', tolerations: [{ key: 'a', operator: 'Exists' }] },
      want: ['node(s) had untolerated taint {b: 1}'],
    },
    {
      name: 'tolerate everything',
      node: { name: 'n1', taints: [taint('a', 'NoSchedule'), taint('b', 'NoExecute')] },
      pod: { name: 'p', tolerations: [{ operator: 'Exists' }] },
      want: [],
    },
  ]));

const nodeTerms = (...terms: object[]) =>
  ({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } }) as FixturePod['affinity'];
const expr = (key: string, operator: string, values?: string[]) => ({ key, operator, ...(values ? { values } : {}) });

describe('nodeAffinity', () =>
  run(nodeAffinity, [
    { name: 'no selector, no affinity', node: { name: 'n1' }, pod: { name: 'p' }, want: [] },
    { name: 'nodeSelector matches', node: { name: 'n1', labels: { disk: 'ssd', zone: 'a' } }, pod: { name: 'p', nodeSelector: { disk: 'ssd' } }, want: [] },
    {
      name: 'nodeSelector: a label differs',
      node: { name: 'n1', labels: { disk: 'hdd' } },
      pod: { name: 'p', nodeSelector: { disk: 'ssd' } },
      want: [REASONS.nodeAffinity],
    },
    {
      name: 'nodeSelector: every label must match',
      node: { name: 'n1', labels: { disk: 'ssd' } },
      pod: { name: 'p', nodeSelector: { disk: 'ssd', zone: 'a' } },
      want: [REASONS.nodeAffinity],
    },
    {
      name: 'In',
      node: { name: 'n1', labels: { zone: 'b' } },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('zone', 'In', ['a', 'b'])] }) },
      want: [],
    },
    {
      name: 'In, no match',
      node: { name: 'n1', labels: { zone: 'c' } },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('zone', 'In', ['a', 'b'])] }) },
      want: [REASONS.nodeAffinity],
    },
    {
      name: 'NotIn',
      node: { name: 'n1', labels: { zone: 'c' } },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('zone', 'NotIn', ['a'])] }) },
      want: [],
    },
    {
      name: 'NotIn holds for a missing label',
      node: { name: 'n1' },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('zone', 'NotIn', ['a'])] }) },
      want: [],
    },
    {
      name: 'NotIn, excluded',
      node: { name: 'n1', labels: { zone: 'a' } },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('zone', 'NotIn', ['a'])] }) },
      want: [REASONS.nodeAffinity],
    },
    {
      name: 'Exists',
      node: { name: 'n1', labels: { gpu: '' } },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('gpu', 'Exists')] }) },
      want: [],
    },
    {
      name: 'Exists, missing',
      node: { name: 'n1' },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('gpu', 'Exists')] }) },
      want: [REASONS.nodeAffinity],
    },
    { name: 'DoesNotExist', node: { name: 'n1' }, pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('gpu', 'DoesNotExist')] }) }, want: [] },
    {
      name: 'DoesNotExist, present',
      node: { name: 'n1', labels: { gpu: 'a100' } },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('gpu', 'DoesNotExist')] }) },
      want: [REASONS.nodeAffinity],
    },
    {
      name: 'Gt',
      node: { name: 'n1', labels: { cores: '16' } },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('cores', 'Gt', ['8'])] }) },
      want: [],
    },
    {
      name: 'Gt, equal is not greater',
      node: { name: 'n1', labels: { cores: '8' } },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('cores', 'Gt', ['8'])] }) },
      want: [REASONS.nodeAffinity],
    },
    {
      name: 'Gt, not a number',
      node: { name: 'n1', labels: { cores: 'many' } },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('cores', 'Gt', ['8'])] }) },
      want: [REASONS.nodeAffinity],
    },
    {
      name: 'Lt',
      node: { name: 'n1', labels: { cores: '4' } },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('cores', 'Lt', ['8'])] }) },
      want: [],
    },
    {
      name: 'Lt, missing label',
      node: { name: 'n1' },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('cores', 'Lt', ['8'])] }) },
      want: [REASONS.nodeAffinity],
    },
    {
      name: 'expressions of a term are ANDed',
      node: { name: 'n1', labels: { zone: 'a', disk: 'hdd' } },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('zone', 'In', ['a']), expr('disk', 'In', ['ssd'])] }) },
      want: [REASONS.nodeAffinity],
    },
    {
      name: 'terms are ORed',
      node: { name: 'n1', labels: { zone: 'a', disk: 'hdd' } },
      pod: { name: 'p', affinity: nodeTerms({ matchExpressions: [expr('disk', 'In', ['ssd'])] }, { matchExpressions: [expr('zone', 'In', ['a'])] }) },
      want: [],
    },
    { name: 'an empty term matches nothing', node: { name: 'n1' }, pod: { name: 'p', affinity: nodeTerms({}) }, want: [REASONS.nodeAffinity] },
    {
      name: 'matchFields on metadata.name',
      node: { name: 'n1' },
      pod: { name: 'p', affinity: nodeTerms({ matchFields: [expr('metadata.name', 'In', ['n1'])] }) },
      want: [],
    },
    {
      name: 'matchFields, another node',
      node: { name: 'n2' },
      pod: { name: 'p', affinity: nodeTerms({ matchFields: [expr('metadata.name', 'In', ['n1'])] }) },
      want: [REASONS.nodeAffinity],
    },
    {
      name: 'matchFields NotIn',
      node: { name: 'n2' },
      pod: { name: 'p', affinity: nodeTerms({ matchFields: [expr('metadata.name', 'NotIn', ['n1'])] }) },
      want: [],
    },
    {
      name: 'matchFields on another field matches nothing',
      node: { name: 'n1' },
      pod: { name: 'p', affinity: nodeTerms({ matchFields: [expr('metadata.uid', 'In', ['n1'])] }) },
      want: [REASONS.nodeAffinity],
    },
    {
      name: 'nodeSelector and affinity must both hold',
      node: { name: 'n1', labels: { zone: 'a' } },
      pod: { name: 'p', nodeSelector: { disk: 'ssd' }, affinity: nodeTerms({ matchExpressions: [expr('zone', 'In', ['a'])] }) },
      want: [REASONS.nodeAffinity],
    },
  ]));

describe('hostPortsFree', () =>
  run(hostPortsFree, [
    { name: 'no ports', node: { name: 'n1' }, existing: [{ name: 'a', hostPorts: [{ port: 80 }] }], pod: { name: 'p' }, want: [] },
    {
      name: 'a port in use',
      node: { name: 'n1' },
      existing: [{ name: 'a', hostPorts: [{ port: 80 }] }],
      pod: { name: 'p', hostPorts: [{ port: 80 }] },
      want: [REASONS.ports],
    },
    {
      name: 'another port',
      node: { name: 'n1' },
      existing: [{ name: 'a', hostPorts: [{ port: 80 }] }],
      pod: { name: 'p', hostPorts: [{ port: 81 }] },
      want: [],
    },
    {
      name: 'another protocol',
      node: { name: 'n1' },
      existing: [{ name: 'a', hostPorts: [{ port: 53 }] }],
      pod: { name: 'p', hostPorts: [{ port: 53, protocol: 'UDP' }] },
      want: [],
    },
    {
      name: 'two specific addresses do not collide',
      node: { name: 'n1' },
      existing: [{ name: 'a', hostPorts: [{ port: 80, ip: '10.0.0.1' }] }],
      pod: { name: 'p', hostPorts: [{ port: 80, ip: '10.0.0.2' }] },
      want: [],
    },
    {
      name: 'a wildcard collides with a specific address',
      node: { name: 'n1' },
      existing: [{ name: 'a', hostPorts: [{ port: 80, ip: '10.0.0.1' }] }],
      pod: { name: 'p', hostPorts: [{ port: 80 }] },
      want: [REASONS.ports],
    },
    {
      name: 'a finished pod holds no port',
      node: { name: 'n1' },
      existing: [{ name: 'a', hostPorts: [{ port: 80 }], phase: 'Succeeded' }],
      pod: { name: 'p', hostPorts: [{ port: 80 }] },
      want: [],
    },
  ]));

describe('resourcesFit', () =>
  run(resourcesFit, [
    {
      name: 'fits',
      node: { name: 'n1', cpu: '2', memory: '2Gi' },
      existing: [{ name: 'a', cpu: '1', memory: '1Gi' }],
      pod: { name: 'p', cpu: '1', memory: '1Gi' },
      want: [],
    },
    {
      name: 'cpu short',
      node: { name: 'n1', cpu: '2', memory: '2Gi' },
      existing: [{ name: 'a', cpu: '1500m' }],
      pod: { name: 'p', cpu: '600m' },
      want: [REASONS.insufficient('cpu')],
    },
    {
      name: 'memory short',
      node: { name: 'n1', cpu: '2', memory: '2Gi' },
      existing: [{ name: 'a', memory: '1536Mi' }],
      pod: { name: 'p', memory: '600Mi' },
      want: ['Insufficient memory'],
    },
    {
      name: 'both short: both reasons',
      node: { name: 'n1', cpu: '1', memory: '1Gi' },
      pod: { name: 'p', cpu: '2', memory: '2Gi' },
      want: ['Insufficient cpu', 'Insufficient memory'],
    },
    { name: 'too many pods', node: { name: 'n1', pods: 2 }, existing: [{ name: 'a' }, { name: 'b' }], pod: { name: 'p' }, want: [REASONS.tooManyPods] },
    { name: 'a pod requesting nothing fits a full node', node: { name: 'n1', cpu: '1' }, existing: [{ name: 'a', cpu: '1' }], pod: { name: 'p' }, want: [] },
    {
      name: 'finished pods free their requests',
      node: { name: 'n1', cpu: '1' },
      existing: [{ name: 'a', cpu: '1', phase: 'Failed' }],
      pod: { name: 'p', cpu: '1' },
      want: [],
    },
    {
      name: 'an extended resource the node lacks',
      node: { name: 'n1' },
      pod: { name: 'p', requests: { 'nvidia.com/gpu': '1' } },
      want: ['Insufficient nvidia.com/gpu'],
    },
    {
      name: 'an extended resource, used up',
      node: { name: 'n1', extra: { 'nvidia.com/gpu': '1' } },
      existing: [{ name: 'a', requests: { 'nvidia.com/gpu': '1' } }],
      pod: { name: 'p', requests: { 'nvidia.com/gpu': '1' } },
      want: ['Insufficient nvidia.com/gpu'],
    },
    {
      name: 'an extended resource, free',
      node: { name: 'n1', extra: { 'nvidia.com/gpu': '2' } },
      existing: [{ name: 'a', requests: { 'nvidia.com/gpu': '1' } }],
      pod: { name: 'p', requests: { 'nvidia.com/gpu': '1' } },
      want: [],
    },
    {
      name: 'local storage is not judged where the node reports none',
      node: { name: 'n1' },
      pod: { name: 'p', requests: { 'ephemeral-storage': '10Gi' } },
      want: [],
    },
    {
      name: 'init containers count by their largest, not their sum',
      node: { name: 'n1', cpu: '2' },
      pod: {
        name: 'p',
        containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '500m' } } }] as FixturePod['containers'],
        initContainers: [
          { name: 'i1', image: 'x', resources: { requests: { cpu: '2' } } },
          { name: 'i2', image: 'x', resources: { requests: { cpu: '2' } } },
        ] as FixturePod['initContainers'],
      },
      want: [],
    },
  ]));

const podAffinity = (...terms: object[]) => ({ podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } }) as FixturePod['affinity'];
const podAntiAffinity = (...terms: object[]) => ({ podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } }) as FixturePod['affinity'];

describe('interPodAffinity', () =>
  run(interPodAffinity, [
    { name: 'no terms anywhere', node: { name: 'n1' }, existing: [{ name: 'a', labels: { app: 'db' } }], pod: { name: 'p' }, want: [] },
    {
      name: 'anti-affinity: a matching pod on the node',
      node: { name: 'n1' },
      existing: [{ name: 'a', labels: { app: 'web' } }],
      pod: { name: 'p', labels: { app: 'web' }, affinity: podAntiAffinity(sameNodeTerm('web')) },
      want: [REASONS.podAntiAffinity],
    },
    {
      name: 'anti-affinity: no matching pod',
      node: { name: 'n1' },
      existing: [{ name: 'a', labels: { app: 'db' } }],
      pod: { name: 'p', affinity: podAntiAffinity(sameNodeTerm('web')) },
      want: [],
    },
    {
      name: "anti-affinity looks only in the pod's namespace by default",
      node: { name: 'n1' },
      existing: [{ name: 'a', namespace: 'other', labels: { app: 'web' } }],
      pod: { name: 'p', affinity: podAntiAffinity(sameNodeTerm('web')) },
      want: [],
    },
    {
      name: 'anti-affinity with listed namespaces',
      node: { name: 'n1' },
      existing: [{ name: 'a', namespace: 'other', labels: { app: 'web' } }],
      pod: { name: 'p', affinity: podAntiAffinity({ ...sameNodeTerm('web'), namespaces: ['other'] }) },
      want: [REASONS.podAntiAffinity],
    },
    {
      name: 'anti-affinity with an empty namespaceSelector: every namespace',
      node: { name: 'n1' },
      existing: [{ name: 'a', namespace: 'other', labels: { app: 'web' } }],
      pod: { name: 'p', affinity: podAntiAffinity({ ...sameNodeTerm('web'), namespaceSelector: {} }) },
      want: [REASONS.podAntiAffinity],
    },
    {
      name: "the symmetric rule: a placed pod's anti-affinity repels the incoming pod",
      node: { name: 'n1' },
      existing: [{ name: 'a', labels: { app: 'db' }, affinity: podAntiAffinity(sameNodeTerm('web')) }],
      pod: { name: 'p', labels: { app: 'web' } },
      want: [REASONS.existingAntiAffinity],
    },
    {
      name: "a placed pod's anti-affinity for others does not repel",
      node: { name: 'n1' },
      existing: [{ name: 'a', labels: { app: 'db' }, affinity: podAntiAffinity(sameNodeTerm('cache')) }],
      pod: { name: 'p', labels: { app: 'web' } },
      want: [],
    },
    {
      name: 'a topology key the node lacks: anti-affinity holds',
      node: { name: 'n1' },
      existing: [{ name: 'a', labels: { app: 'web' } }],
      pod: { name: 'p', affinity: podAntiAffinity({ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'zone' }) },
      want: [],
    },
    {
      name: 'affinity: a matching pod on the node',
      node: { name: 'n1' },
      existing: [{ name: 'a', labels: { app: 'db' } }],
      pod: { name: 'p', affinity: podAffinity(sameNodeTerm('db')) },
      want: [],
    },
    {
      name: 'affinity: none here but one elsewhere',
      node: { name: 'n1' },
      others: [{ name: 'n2' }],
      existing: [{ name: 'a', labels: { app: 'db' }, nodeName: 'n2' }],
      pod: { name: 'p', affinity: podAffinity(sameNodeTerm('db')) },
      want: [REASONS.podAffinity],
    },
    {
      name: 'affinity: no matching pod anywhere and the pod is not one itself',
      node: { name: 'n1' },
      pod: { name: 'p', labels: { app: 'web' }, affinity: podAffinity(sameNodeTerm('db')) },
      want: [REASONS.podAffinity],
    },
    {
      name: 'affinity: the first of a group that wants to be together may go anywhere',
      node: { name: 'n1' },
      pod: { name: 'p', labels: { app: 'db' }, affinity: podAffinity(sameNodeTerm('db')) },
      want: [],
    },
    {
      name: 'affinity with a zone topology: a pod on another node of the zone counts',
      node: { name: 'n1', labels: { zone: 'a' } },
      others: [{ name: 'n2', labels: { zone: 'a' } }],
      existing: [{ name: 'a', labels: { app: 'db' }, nodeName: 'n2' }],
      pod: { name: 'p', affinity: podAffinity({ labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'zone' }) },
      want: [],
    },
    {
      name: 'affinity with a zone topology: a pod in another zone does not',
      node: { name: 'n1', labels: { zone: 'a' } },
      others: [{ name: 'n2', labels: { zone: 'b' } }],
      existing: [{ name: 'a', labels: { app: 'db' }, nodeName: 'n2' }],
      pod: { name: 'p', affinity: podAffinity({ labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'zone' }) },
      want: [REASONS.podAffinity],
    },
    {
      name: 'anti-affinity with a zone topology: a pod on another node of the zone repels',
      node: { name: 'n1', labels: { zone: 'a' } },
      others: [{ name: 'n2', labels: { zone: 'a' } }],
      existing: [{ name: 'a', labels: { app: 'web' }, nodeName: 'n2' }],
      pod: { name: 'p', affinity: podAntiAffinity({ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'zone' }) },
      want: [REASONS.podAntiAffinity],
    },
    {
      name: 'a term without a labelSelector matches no pod',
      node: { name: 'n1' },
      existing: [{ name: 'a', labels: { app: 'web' } }],
      pod: { name: 'p', affinity: podAntiAffinity({ topologyKey: 'kubernetes.io/hostname' }) },
      want: [],
    },
  ]));

describe('runFilters', () => {
  it("reports the reasons of the first filter that fails, in kube-scheduler's order", () => {
    const cache = cacheOf([node({ name: 'n1', cpu: '1', unschedulable: true, taints: [taint('k', 'NoSchedule')] })]);
    const ctx = filterContext(podInfo(pod({ name: 'p', cpu: '2' })));
    assert.deepEqual([...runFilters(ctx, cache.nodeOf('n1')!)], [REASONS.unschedulable]);
  });

  it('passes a node that fits everything', () => {
    const cache = cacheOf([node({ name: 'n1' })]);
    assert.deepEqual([...runFilters(filterContext(podInfo(pod({ name: 'p', cpu: '1' }))), cache.nodeOf('n1')!)], []);
  });
});
