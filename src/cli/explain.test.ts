import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deploymentKind } from '../core/api/deployment.js';
import { buildOpenApiDocuments } from '../core/api/openapi/documents.js';
import { podKind } from '../core/api/pod.js';
import { kinds } from '../core/api/registry.js';
import { formatExplain, type OpenApiV3Document } from './explain.js';

const docs = buildOpenApiDocuments(kinds);
const doc = (path: string) => JSON.parse(docs.v3.get(path)!.json) as OpenApiV3Document;

describe('formatExplain', () => {
  it("prints a field's type, description and fields as kubectl does", () => {
    const text = formatExplain(doc('api/v1'), podKind, ['spec', 'containers'], false);
    assert.match(text, /^KIND: {7}Pod\nVERSION: {4}v1\n\nFIELD: containers <\[\]Container>\n\n\nDESCRIPTION:\n {4}The containers of the pod/);
    assert.match(text, /\nFIELDS:\n/);
    assert.match(text, /\n {2}image\t<string> -required-\n {4}The container image to run\.\n/);
    assert.match(text, /\n {2}ports\t<\[\]ContainerPort>\n/);
    assert.match(text, /\n {2}imagePullPolicy\t<string>\n {2}enum: Always, IfNotPresent, Never\n/);
  });

  it('prints the whole tree of fields with --recursive, and the group of a grouped kind', () => {
    const text = formatExplain(doc('apis/apps/v1'), deploymentKind, ['spec'], true);
    assert.match(text, /^GROUP: {6}apps\nKIND: {7}Deployment\nVERSION: {4}v1\n\nFIELD: spec <DeploymentSpec>/);
    assert.match(text, /\n {2}template\t<PodTemplateSpec> -required-\n {4}metadata\t<ObjectMeta>\n/);
    assert.match(text, /\n {6}containers\t<\[\]Container> -required-\n {8}args\t<\[\]string>\n/);
    assert.doesNotMatch(text, /<no description>/);
  });

  it('describes the kind itself, and refuses a field that does not exist', () => {
    assert.match(formatExplain(doc('api/v1'), podKind, [], false), /DESCRIPTION:\n {4}Pod is a group of containers/);
    assert.throws(() => formatExplain(doc('api/v1'), podKind, ['spec', 'nope'], false), /field "nope" does not exist/);
  });
});
