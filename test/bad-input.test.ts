// Feeds well over 100 bad requests and files to a real master: each gets a 4xx Status or a clean CLI error, nothing is written, the server keeps serving.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BINARY, QUIET_LEASES, startMaster, type MasterProcess } from './helpers/master.js';

const PODS = '/api/v1/namespaces/default/pods';
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';
const SVCS = '/api/v1/namespaces/default/services';
const JOIN = '/apis/minik8s.io/v1/join';
const JOIN_TOKENS = '/apis/minik8s.io/v1/jointokens';

const container = { name: 'c', image: 'busybox' };
const goodPod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ok' }, spec: { containers: [container] } };
const withPod = (patch: { metadata?: unknown; spec?: unknown; extra?: Record<string, unknown> }) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: patch.metadata ?? { name: 'p' },
  spec: patch.spec ?? { containers: [container] },
  ...patch.extra,
});
const withContainer = (c: Record<string, unknown>) => withPod({ spec: { containers: [{ ...container, ...c }] } });
const deploy = (spec: Record<string, unknown>) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec });
const goodTemplate = { metadata: { labels: { app: 'x' } }, spec: { containers: [container] } };

function nested(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

interface HttpCase {
  name: string;
  method?: string;
  path?: string;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  contentType?: string;
  /** Expected HTTP status (default: any 4xx). */
  status?: number;
}

const httpCases: HttpCase[] = [
  // Malformed JSON.
  ...[
    '',
    ' ',
    '{',
    '{"apiVersion":',
    'nul',
    '{"a":1,}',
    "{'a':1}",
    '{"a":1}{"b":2}',
    'NaN',
    '\u0000',
    '{"a": undefined}',
    '{"a":01}',
    '{"a":"\\x41"}',
    '}{',
    '[{]',
  ].map((body, i): HttpCase => ({ name: `malformed JSON #${i}`, body, status: 400 })),
  // Not an object at the top.
  ...['[1,2]', '"pod"', '42', 'true', 'null', '[]'].map((body): HttpCase => ({ name: `top-level ${body}`, body, status: 400 })),
  // Wrong types.
  { name: 'metadata is a string', body: withPod({ metadata: 'x' }), status: 400 },
  { name: 'name is a number', body: withPod({ metadata: { name: 5 } }), status: 422 },
  { name: 'labels is an array', body: withPod({ metadata: { name: 'p', labels: ['a'] } }), status: 422 },
  { name: 'label value is a number', body: withPod({ metadata: { name: 'p', labels: { a: 1 } } }), status: 422 },
  { name: 'annotations value is an object', body: withPod({ metadata: { name: 'p', annotations: { a: { b: 1 } } } }), status: 422 },
  { name: 'spec is an array', body: withPod({ spec: [] }), status: 422 },
  { name: 'spec is a string', body: withPod({ spec: 'run' }), status: 422 },
  { name: 'containers is an object', body: withPod({ spec: { containers: { c: container } } }), status: 422 },
  { name: 'image is a number', body: withContainer({ image: 5 }), status: 422 },
  { name: 'command is a string', body: withContainer({ command: 'sh -c true' }), status: 422 },
  { name: 'args contains numbers', body: withContainer({ args: [1, 2] }), status: 422 },
  { name: 'containerPort is a string', body: withContainer({ ports: [{ containerPort: '80' }] }), status: 422 },
  { name: 'containerPort negative', body: withContainer({ ports: [{ containerPort: -1 }] }), status: 422 },
  { name: 'containerPort too large', body: withContainer({ ports: [{ containerPort: 70000 }] }), status: 422 },
  { name: 'containerPort fractional', body: withContainer({ ports: [{ containerPort: 80.5 }] }), status: 422 },
  { name: 'protocol unknown', body: withContainer({ ports: [{ containerPort: 80, protocol: 'HTTP' }] }), status: 422 },
  { name: 'restartPolicy unknown', body: withPod({ spec: { containers: [container], restartPolicy: 'Sometimes' } }), status: 422 },
  { name: 'imagePullPolicy unknown', body: withContainer({ imagePullPolicy: 'Sometimes' }), status: 422 },
  { name: 'cpu limit not a quantity', body: withContainer({ resources: { limits: { cpu: 'lots' } } }), status: 422 },
  { name: 'memory request not a quantity', body: withContainer({ resources: { requests: { memory: '12 GB' } } }), status: 422 },
  { name: 'env is a string', body: withContainer({ env: 'A=1' }), status: 422 },
  { name: 'env entry without name', body: withContainer({ env: [{ value: '1' }] }), status: 422 },
  { name: 'probe port is an object', body: withContainer({ livenessProbe: { tcpSocket: { port: {} } } }), status: 422 },
  { name: 'nodeSelector value is a number', body: withPod({ spec: { containers: [container], nodeSelector: { disk: 1 } } }), status: 422 },
  {
    name: 'replicas is a string',
    path: DEPLOYS,
    body: deploy({ replicas: '3', selector: { matchLabels: { app: 'x' } }, template: goodTemplate }),
    status: 422,
  },
  { name: 'replicas negative', path: DEPLOYS, body: deploy({ replicas: -1, selector: { matchLabels: { app: 'x' } }, template: goodTemplate }), status: 422 },
  {
    name: 'strategy type unknown',
    path: DEPLOYS,
    body: deploy({ selector: { matchLabels: { app: 'x' } }, template: goodTemplate, strategy: { type: 'BlueGreen' } }),
    status: 422,
  },
  {
    name: 'selector operator unknown',
    path: DEPLOYS,
    body: deploy({ selector: { matchExpressions: [{ key: 'app', operator: 'Like', values: ['x'] }] }, template: goodTemplate }),
    status: 422,
  },
  {
    name: 'service port is a string',
    path: SVCS,
    body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 'http' }] } },
    status: 422,
  },
  {
    name: 'service type unknown',
    path: SVCS,
    body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { type: 'Magic', ports: [{ port: 80 }] } },
    status: 422,
  },
  // Missing required fields.
  { name: 'no spec', body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }, status: 422 },
  { name: 'no containers', body: withPod({ spec: {} }), status: 422 },
  { name: 'empty containers', body: withPod({ spec: { containers: [] } }), status: 422 },
  { name: 'container without name', body: withPod({ spec: { containers: [{ image: 'busybox' }] } }), status: 422 },
  { name: 'container without image', body: withPod({ spec: { containers: [{ name: 'c' }] } }), status: 422 },
  { name: 'duplicate container names', body: withPod({ spec: { containers: [container, container] } }), status: 422 },
  { name: 'no name nor generateName', body: withPod({ metadata: {} }), status: 422 },
  { name: 'no metadata', body: { apiVersion: 'v1', kind: 'Pod', spec: { containers: [container] } }, status: 422 },
  { name: 'deployment without selector', body: deploy({ template: goodTemplate }), path: DEPLOYS, status: 422 },
  { name: 'deployment without template', path: DEPLOYS, body: deploy({ selector: { matchLabels: { app: 'x' } } }), status: 422 },
  {
    name: 'deployment selector not matching template',
    path: DEPLOYS,
    body: deploy({ selector: { matchLabels: { app: 'y' } }, template: goodTemplate }),
    status: 422,
  },
  {
    name: 'service port without port',
    path: SVCS,
    body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ name: 'http' }] } },
    status: 422,
  },
  {
    name: 'hpa without maxReplicas',
    body: {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' } },
    },
    path: '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers',
    status: 422,
  },
  { name: 'env from an unknown source', body: withContainer({ env: [{ name: 'A', valueFrom: { magic: {} } }] }), status: 422 },
  // Invalid names.
  ...['UPPER', 'under_score', '-lead', 'trail-', 'a'.repeat(254), 'dots..double', '.dot', 'spa ce', 'ünï', 'a@b', 'tab\tname', 'new\nline'].map(
    (name): HttpCase => ({ name: `invalid pod name ${JSON.stringify(name).slice(0, 20)}`, body: withPod({ metadata: { name } }), status: 422 }),
  ),
  { name: 'invalid namespace name', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'Not.Valid' } }, status: 422 },
  { name: 'namespace name with dots', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a.b' } }, status: 422 },
  { name: 'invalid label key', body: withPod({ metadata: { name: 'p', labels: { 'bad key': 'x' } } }), status: 422 },
  { name: 'label value too long', body: withPod({ metadata: { name: 'p', labels: { a: 'x'.repeat(64) } } }), status: 422 },
  { name: 'label value with spaces', body: withPod({ metadata: { name: 'p', labels: { a: 'x y' } } }), status: 422 },
  { name: 'invalid container name', body: withContainer({ name: 'Main_Container' }), status: 422 },
  // Unknown kinds and mismatches.
  { name: 'unknown resource', path: '/api/v1/namespaces/default/widgets', body: goodPod, status: 404 },
  { name: 'unknown group', path: '/apis/example.com/v1/namespaces/default/things', body: goodPod, status: 404 },
  { name: 'unknown version', path: '/api/v9/namespaces/default/pods', body: goodPod, status: 404 },
  { name: 'kind mismatch', body: { ...goodPod, kind: 'Widget' }, status: 400 },
  { name: 'apiVersion mismatch', body: { ...goodPod, apiVersion: 'v2' }, status: 400 },
  { name: 'deployment posted to pods', body: deploy({ selector: { matchLabels: { app: 'x' } }, template: goodTemplate }), status: 400 },
  { name: 'namespace mismatch', body: withPod({ metadata: { name: 'p', namespace: 'kube-system' } }), status: 400 },
  { name: 'missing namespace', path: '/api/v1/namespaces/nowhere/pods', body: goodPod, status: 404 },
  { name: 'unknown top-level field', body: { ...goodPod, spek: {} }, status: 422 },
  { name: 'unknown spec field', body: withPod({ spec: { containers: [container], contianers: [] } }), status: 422 },
  { name: 'unknown metadata field', body: withPod({ metadata: { name: 'p', nmae: 'q' } }), status: 422 },
  { name: 'resourceVersion on create', body: withPod({ metadata: { name: 'p', resourceVersion: '5' } }), status: 400 },
  { name: 'create on an object path', path: `${PODS}/ok`, method: 'POST', body: goodPod, status: 405 },
  // Sizes.
  { name: 'body over 3 MiB (POST)', body: withPod({ metadata: { name: 'big', annotations: { a: 'x'.repeat(3 * 1024 * 1024) } } }), status: 413 },
  {
    name: 'body over 3 MiB (PUT)',
    method: 'PUT',
    path: `${PODS}/big`,
    body: withPod({ metadata: { name: 'big', annotations: { a: 'x'.repeat(3 * 1024 * 1024) } } }),
    status: 413,
  },
  {
    name: 'body over 3 MiB (PATCH)',
    method: 'PATCH',
    path: `${PODS}/big`,
    contentType: 'application/merge-patch+json',
    body: { metadata: { annotations: { a: 'y'.repeat(4 * 1024 * 1024) } } },
    status: 413,
  },
  { name: 'annotations over the total limit', body: withPod({ metadata: { name: 'p', annotations: { a: 'x'.repeat(300 * 1024) } } }), status: 422 },
  // Deep nesting.
  { name: 'nested 100 levels in spec', body: withPod({ spec: { containers: [container], extra: nested(100) } }), status: 400 },
  {
    name: 'nested 10000 levels',
    body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`,
    status: 400,
  },
  {
    name: 'arrays nested 50000 levels',
    body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":${'['.repeat(50_000)}${']'.repeat(50_000)}}`,
    status: 400,
  },
  { name: 'nested 70 levels in labels', body: withPod({ metadata: { name: 'p', labels: nested(70) } }), status: 400 },
  // Prototype keys.
  {
    name: '__proto__ at the top',
    body: '{"__proto__":{"polluted":true},"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}',
    status: 400,
  },
  {
    name: '__proto__ in metadata',
    body: '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","__proto__":{"x":1}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}',
    status: 400,
  },
  {
    name: '__proto__ in labels',
    body: '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"__proto__":"x"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}',
    status: 400,
  },
  {
    name: '__proto__ in a container',
    body: '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"busybox","__proto__":{"image":"evil"}}]}}',
    status: 400,
  },
  { name: 'constructor at the top', body: { ...goodPod, constructor: { prototype: { polluted: true } } }, status: 422 },
  { name: 'constructor in metadata', body: withPod({ metadata: { name: 'p', constructor: 'x' } }), status: 422 },
  { name: 'constructor in spec', body: withPod({ spec: { containers: [container], constructor: {} } }), status: 422 },
  { name: 'prototype in a container', body: withContainer({ prototype: {} }), status: 422 },
  {
    name: '__proto__ in a merge patch',
    method: 'PATCH',
    path: `${PODS}/ok`,
    contentType: 'application/merge-patch+json',
    body: '{"metadata":{"__proto__":{"labels":{"a":"b"}}}}',
    status: 400,
  },
  // Other request errors.
  { name: 'unsupported content type', body: JSON.stringify(goodPod), contentType: 'text/plain', status: 415 },
  { name: 'yaml content type', body: 'apiVersion: v1', contentType: 'application/yaml', status: 415 },
  { name: 'bad label selector', method: 'GET', path: `${PODS}?labelSelector=${encodeURIComponent('a in (')}`, status: 400 },
  { name: 'bad label selector operator', method: 'GET', path: `${PODS}?labelSelector=${encodeURIComponent('a ~ b')}`, status: 400 },
  { name: 'unsupported field selector', method: 'GET', path: `${PODS}?fieldSelector=spec.containers%3Dx`, status: 400 },
  { name: 'malformed field selector', method: 'GET', path: `${PODS}?fieldSelector=nonsense`, status: 400 },
  { name: 'watch from a non-numeric revision', method: 'GET', path: `${PODS}?watch=1&resourceVersion=abc`, status: 400 },
  { name: 'PUT with a name mismatch', method: 'PUT', path: `${PODS}/ok`, body: withPod({ metadata: { name: 'other' } }), status: 400 },
  { name: 'PUT of a missing object', method: 'PUT', path: `${PODS}/absent`, body: withPod({ metadata: { name: 'absent' } }), status: 404 },
  {
    name: 'PUT with a stale resourceVersion',
    method: 'PUT',
    path: `${PODS}/ok`,
    body: withPod({ metadata: { name: 'ok', resourceVersion: '1' } }),
    status: 409,
  },
  {
    name: 'PATCH making the object invalid',
    method: 'PATCH',
    path: `${PODS}/ok`,
    contentType: 'application/merge-patch+json',
    body: { spec: { containers: null } },
    status: 422,
  },
  { name: 'PATCH with a non-object body', method: 'PATCH', path: `${PODS}/ok`, contentType: 'application/merge-patch+json', body: '[1]', status: 400 },
  {
    name: 'PATCH changing the name',
    method: 'PATCH',
    path: `${PODS}/ok`,
    contentType: 'application/merge-patch+json',
    body: { metadata: { name: 'renamed' } },
    status: 400,
  },
  { name: 'status PUT with an invalid phase', method: 'PUT', path: `${PODS}/ok/status`, body: { ...goodPod, status: { phase: 'Exploded' } }, status: 422 },
  { name: 'DELETE with a bad propagationPolicy', method: 'DELETE', path: `${PODS}/ok?propagationPolicy=Sometimes`, status: 400 },
  { name: 'DELETE with a malformed body', method: 'DELETE', path: `${PODS}/ok`, body: '{"preconditions":', status: 400 },
  { name: 'DELETE with a failing precondition', method: 'DELETE', path: `${PODS}/ok`, body: { preconditions: { uid: 'nope' } }, status: 409 },
  { name: 'DELETE of the default namespace', method: 'DELETE', path: '/api/v1/namespaces/default', status: 403 },
  { name: 'DELETE of a missing object', method: 'DELETE', path: `${PODS}/absent`, status: 404 },
  { name: 'unknown subresource', method: 'GET', path: `${PODS}/ok/bogus`, status: 404 },
  { name: 'POST to a cluster-wide list of a namespaced kind', path: '/api/v1/pods', body: goodPod, status: 405 },
  {
    name: 'service with a duplicate port name',
    path: SVCS,
    body: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: {
        ports: [
          { name: 'a', port: 80 },
          { name: 'a', port: 81 },
        ],
      },
    },
    status: 422,
  },
  // Joins and join tokens (as the admin, who may do both): nothing is made from a bad request.
  ...['', '{', '[]', 'null', '"n1"', '{"nodeName":"n1"}{}'].map((body, i): HttpCase => ({ name: `malformed join #${i}`, path: JOIN, body, status: 400 })),
  ...[undefined, '', 'UPPER', 'under_score', '-lead', 'a'.repeat(254), 'sp ace', '../up', 5, ['n1'], { a: 1 }].map(
    (nodeName, i): HttpCase => ({
      name: `join with a bad nodeName #${i}`,
      path: JOIN,
      body: { apiVersion: 'minik8s.io/v1', kind: 'JoinRequest', nodeName },
      status: 422,
    }),
  ),
  { name: 'join with an unknown field', path: JOIN, body: { nodeName: 'n1', podCIDR: '10.0.0.0/24' }, status: 400 },
  { name: 'join with a wrong apiVersion', path: JOIN, body: { apiVersion: 'v1', kind: 'JoinRequest', nodeName: 'n1' }, status: 400 },
  { name: 'join with a wrong kind', path: JOIN, body: { apiVersion: 'minik8s.io/v1', kind: 'Node', nodeName: 'n1' }, status: 400 },
  { name: 'join as text/plain', path: JOIN, body: '{"nodeName":"n1"}', contentType: 'text/plain', status: 415 },
  { name: 'GET of the join path', method: 'GET', path: JOIN, status: 405 },
  ...[-1, 1.5, '1h', 1e12, null].map(
    (ttlSeconds, i): HttpCase => ({ name: `join token with a bad ttlSeconds #${i}`, path: JOIN_TOKENS, body: { ttlSeconds }, status: 422 }),
  ),
  { name: 'join token with a multi-line description', path: JOIN_TOKENS, body: { description: 'a\nb' }, status: 422 },
  { name: 'join token with an unknown field', path: JOIN_TOKENS, body: { ttl: '1h' }, status: 400 },
  { name: 'DELETE of a missing join token', method: 'DELETE', path: `${JOIN_TOKENS}/abcdef`, status: 404 },
  { name: 'DELETE of a malformed join token ID', method: 'DELETE', path: `${JOIN_TOKENS}/..%2Fx`, status: 404 },
  {
    name: 'token review without a token',
    path: '/apis/authentication.k8s.io/v1/tokenreviews',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: {} },
    status: 400,
  },
];

interface FileCase {
  name: string;
  /** File name and content; the content may be a function of the dir. */
  file?: string;
  content?: string;
  /** Args after `apply`; default `-f FILE`. */
  args?: string[];
  /** What stderr must mention. */
  stderr: RegExp;
}

const billionLaughs = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
  'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
  'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
  'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
  'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
  'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
  'h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]',
  'i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]',
].join('\n');

const fileCases: FileCase[] = [
  { name: 'missing file', args: ['-f', '/nonexistent/pod.yaml'], stderr: /does not exist/ },
  { name: 'YAML syntax error', file: 'a.yaml', content: 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed\n', stderr: /line \d+/ },
  { name: 'YAML bad indentation', file: 'b.yaml', content: 'apiVersion: v1\n kind: Pod\nmetadata: {}\n', stderr: /line \d+/ },
  { name: 'YAML tab indentation', file: 'c.yaml', content: 'apiVersion: v1\nkind: Pod\nmetadata:\n\tname: x\n', stderr: /line \d+|error/ },
  { name: 'YAML alias bomb', file: 'bomb.yaml', content: `apiVersion: v1\nkind: Pod\nmetadata: {name: bomb}\n${billionLaughs}\n`, stderr: /alias|error/i },
  { name: 'YAML document is a list', file: 'd.yaml', content: '- a\n- b\n', stderr: /error/ },
  { name: 'YAML document is a scalar', file: 'e.yaml', content: 'just a string\n', stderr: /error/ },
  {
    name: 'missing apiVersion',
    file: 'f.yaml',
    content: 'kind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, image: busybox}]}\n',
    stderr: /apiVersion/,
  },
  { name: 'missing kind', file: 'g.yaml', content: 'apiVersion: v1\nmetadata: {name: x}\n', stderr: /kind/ },
  { name: 'unknown kind', file: 'h.yaml', content: 'apiVersion: v1\nkind: Widget\nmetadata: {name: x}\n', stderr: /Widget/ },
  { name: 'unknown apiVersion', file: 'i.yaml', content: 'apiVersion: apps/v9\nkind: Deployment\nmetadata: {name: x}\n', stderr: /apps\/v9|Deployment/ },
  {
    name: 'schema error with field path',
    file: 'j.yaml',
    content: 'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c}]}\n',
    stderr: /spec\.containers\[0\]\.image/,
  },
  {
    name: 'invalid name in YAML',
    file: 'k.yaml',
    content: 'apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {containers: [{name: c, image: busybox}]}\n',
    stderr: /metadata\.name/,
  },
  { name: 'JSON file with a syntax error', file: 'l.json', content: '{"apiVersion": "v1", "kind": ', stderr: /error/ },
  {
    name: '__proto__ key in YAML',
    file: 'm.yaml',
    content: 'apiVersion: v1\nkind: Pod\n__proto__: {polluted: true}\nmetadata: {name: x}\nspec: {containers: [{name: c, image: busybox}]}\n',
    stderr: /__proto__|error/,
  },
  {
    name: 'file over 3 MiB',
    file: 'n.yaml',
    content: `apiVersion: v1\nkind: Pod\nmetadata: {name: big, annotations: {a: "${'x'.repeat(3 * 1024 * 1024 + 1)}"}}\nspec: {containers: [{name: c, image: busybox}]}\n`,
    stderr: /error/,
  },
  {
    name: 'deeply nested YAML',
    file: 'o.yaml',
    content: `apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: ${'['.repeat(5000)}${']'.repeat(5000)}\n`,
    stderr: /error/,
  },
  {
    name: 'one bad document among good ones writes nothing of the bad one',
    file: 'p.yaml',
    content: 'apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {containers: [{name: c, image: busybox}]}\n',
    stderr: /Invalid|invalid/,
  },
];

describe('bad input', () => {
  let master: MasterProcess;
  let dir: string;

  const request = async (c: HttpCase) => {
    const body = c.body === undefined ? undefined : typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
    const res = await fetch(`${master.url}${c.path ?? PODS}`, {
      method: c.method ?? (body === undefined ? 'GET' : 'POST'),
      headers: { authorization: `Bearer ${master.token}`, 'content-type': c.contentType ?? 'application/json' },
      body,
    });
    return { status: res.status, text: await res.text() };
  };
  const revision = async () => {
    const res = await fetch(`${master.url}/api/v1/namespaces`, { headers: { authorization: `Bearer ${master.token}` } });
    return ((await res.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  };

  before(async () => {
    // No scheduler: its FailedScheduling Event and condition for the seed pod would be writes no bad request made; no Lease renewals either.
    master = await startMaster({ registry: false, extraArgs: ['--disable-scheduler', ...QUIET_LEASES] });
    dir = mkdtempSync(join(tmpdir(), 'minik8s-bad-input-'));
    const res = await request({ name: 'seed', body: goodPod });
    assert.equal(res.status, 201, res.text);
  });
  after(async () => {
    await master?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`has at least 100 cases (${httpCases.length} HTTP + ${fileCases.length} files)`, () => {
    assert.ok(httpCases.length + fileCases.length >= 100);
  });

  for (const c of httpCases) {
    it(`HTTP: ${c.name}`, async () => {
      const before = await revision();
      const res = await request(c);
      assert.ok(res.status >= 400 && res.status < 500, `want 4xx, got ${res.status}: ${res.text.slice(0, 300)}`);
      if (c.status !== undefined) assert.equal(res.status, c.status, res.text.slice(0, 300));
      const status = JSON.parse(res.text) as { kind: string; code: number; message: string };
      assert.equal(status.kind, 'Status');
      assert.equal(status.code, res.status);
      assert.ok(status.message.length > 0 && status.message.length < 4096, 'a short human message');
      assert.ok(!/\n\s+at /.test(res.text), 'no stack trace');
      assert.equal(await revision(), before, 'nothing was written');
      assert.equal((await fetch(`${master.url}/healthz`)).status, 200, 'still serving');
    });
  }

  for (const c of fileCases) {
    it(`CLI: ${c.name}`, async () => {
      const before = await revision();
      let args = c.args;
      if (!args) {
        const path = join(dir, c.file!);
        writeFileSync(path, c.content!);
        args = ['-f', path];
      }
      const r = spawnSync(process.execPath, [BINARY, 'apply', ...args], { env: master.env, encoding: 'utf8', timeout: 60_000 });
      assert.notEqual(r.status, 0, `must fail: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, c.stderr);
      assert.ok(!/\n\s+at /.test(r.stderr), `no stack trace: ${r.stderr.slice(0, 500)}`);
      assert.equal(await revision(), before, 'nothing was written');
    });
  }

  it('the server still serves reads and writes afterwards', async () => {
    const res = await request({ name: 'after', body: { ...goodPod, metadata: { name: 'after' } } });
    assert.equal(res.status, 201, res.text);
  });
});
