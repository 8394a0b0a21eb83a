// The activator's URL forms.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { functionUrl, parseActivatorUrl, workflowUrl } from './activator-paths.js';

describe('parseActivatorUrl', () => {
  const cases: [string, ReturnType<typeof parseActivatorUrl>][] = [
    ['/function/hello', { type: 'function', namespace: 'default', name: 'hello', subPath: '/', query: '' }],
    ['/function/hello/', { type: 'function', namespace: 'default', name: 'hello', subPath: '/', query: '' }],
    ['/function/hello/a/b?x=1&y=2', { type: 'function', namespace: 'default', name: 'hello', subPath: '/a/b', query: 'x=1&y=2' }],
    ['/function/hello?x=1', { type: 'function', namespace: 'default', name: 'hello', subPath: '/', query: 'x=1' }],
    ['/namespaces/team-a/function/hello/healthz', { type: 'function', namespace: 'team-a', name: 'hello', subPath: '/healthz', query: '' }],
    ['/workflow/flow', { type: 'workflow', namespace: 'default', name: 'flow', subPath: '/', query: '' }],
    ['/namespaces/x/workflow/flow', { type: 'workflow', namespace: 'x', name: 'flow', subPath: '/', query: '' }],
    ['/functions/hello', undefined],
    ['/function/', undefined],
    ['/function/Hello', undefined],
    ['/namespaces/Bad/function/hello', undefined],
    ['/function/%E0%A4%A', undefined],
    ['/', undefined],
  ];
  for (const [url, want] of cases) it(url, () => assert.deepEqual(parseActivatorUrl(url), want));
});

describe('function and workflow URLs', () => {
  it('leave out the default namespace', () => {
    assert.equal(functionUrl('http://10.0.0.1:8090/', 'default', 'hello'), 'http://10.0.0.1:8090/function/hello');
    assert.equal(functionUrl('http://10.0.0.1:8090', 'team', 'hello'), 'http://10.0.0.1:8090/namespaces/team/function/hello');
    assert.equal(workflowUrl('http://10.0.0.1:8090', 'default', 'flow'), 'http://10.0.0.1:8090/workflow/flow');
  });
});
