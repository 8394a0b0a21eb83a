import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kinds } from '../registry.js';
import { definitionPrefix, kindDefinitionName } from './definition-names.js';
import { buildOpenApiDocuments, groupVersionPath, openApiDocuments } from './documents.js';

const docs = buildOpenApiDocuments(kinds);
/** Parsed JSON, read by path in these tests. */
// biome-ignore lint/suspicious/noExplicitAny: the documents are walked ad hoc, field by field
type Json = any;
type Doc = { components: { schemas: Record<string, Json> }; paths: Record<string, Json> };
const v3 = (path: string) => JSON.parse(docs.v3.get(path)!.json) as Doc;
const core = v3('api/v1').components.schemas;
const apps = v3('apis/apps/v1').components.schemas;

describe('OpenAPI definition names', () => {
  it('follows Kubernetes: core, named groups, k8s.io groups, and reversed domains for others', () => {
    assert.equal(definitionPrefix('', 'v1'), 'io.k8s.api.core.v1');
    assert.equal(definitionPrefix('apps', 'v1'), 'io.k8s.api.apps.v1');
    assert.equal(definitionPrefix('discovery.k8s.io', 'v1'), 'io.k8s.api.discovery.v1');
    assert.equal(definitionPrefix('minik8s.io', 'v1'), 'io.minik8s.v1');
  });
});

describe('OpenAPI v3 documents', () => {
  it('has every kind of the registry with its group-version-kind, in its group/version document', () => {
    for (const def of kinds) {
      const schema = v3(groupVersionPath(def)).components.schemas[kindDefinitionName(def)];
      assert.ok(schema, `${def.kind} missing`);
      assert.deepEqual(schema['x-kubernetes-group-version-kind'], [{ group: def.group, kind: def.kind, version: def.version }]);
      assert.equal(schema.properties.metadata.allOf[0].$ref, '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    }
  });

  it("makes a Pod's containers a list of Container merged by name", () => {
    const containers = core['io.k8s.api.core.v1.PodSpec']!.properties.containers;
    assert.equal(containers.type, 'array');
    assert.equal(containers.items.$ref, '#/components/schemas/io.k8s.api.core.v1.Container');
    assert.equal(containers['x-kubernetes-patch-merge-key'], 'name');
    assert.equal(containers['x-kubernetes-patch-strategy'], 'merge');
    assert.deepEqual(containers['x-kubernetes-list-map-keys'], ['name']);
    assert.equal(core['io.k8s.api.core.v1.Container']!.properties.ports['x-kubernetes-patch-merge-key'], 'containerPort');
    assert.deepEqual(core['io.k8s.api.core.v1.Container']!.required, ['name', 'image']);
    assert.equal(core['io.k8s.api.core.v1.PodSpec']!.properties.volumes['x-kubernetes-patch-strategy'], 'merge,retainKeys');
  });

  it('makes ports and surges int-or-string where Kubernetes has them, and quantities strings', () => {
    const intOrString = '#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString';
    assert.equal(core['io.k8s.api.core.v1.HTTPGetAction']!.properties.port.$ref, intOrString);
    assert.equal(core['io.k8s.api.core.v1.ServicePort']!.properties.targetPort.allOf[0].$ref, intOrString);
    assert.equal(apps['io.k8s.api.apps.v1.RollingUpdateDeployment']!.properties.maxSurge.allOf[0].$ref, intOrString);
    assert.equal(core['io.k8s.apimachinery.pkg.util.intstr.IntOrString']!['x-kubernetes-int-or-string'], true);
    assert.equal(
      core['io.k8s.api.core.v1.ResourceRequirements']!.properties.limits.additionalProperties.$ref,
      '#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity',
    );
    assert.deepEqual(core['io.k8s.api.core.v1.ContainerPort']!.properties.containerPort, {
      description: "The port number on the pod's IP address.",
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: 65535,
    });
  });

  it("shares the pod template between workloads and the Pod's own spec", () => {
    assert.equal(apps['io.k8s.api.apps.v1.DeploymentSpec']!.properties.template.allOf[0].$ref, '#/components/schemas/io.k8s.api.core.v1.PodTemplateSpec');
    assert.equal(apps['io.k8s.api.core.v1.PodTemplateSpec']!.properties.spec.allOf[0].$ref, '#/components/schemas/io.k8s.api.core.v1.PodSpec');
    assert.ok(apps['io.k8s.api.core.v1.Container']);
  });

  it('describes each PATCH operation with its kind and the fieldValidation parameter, as kubectl looks for them', () => {
    const patch = v3('api/v1').paths['/api/v1/namespaces/{namespace}/pods/{name}']!.patch;
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: '', kind: 'Pod', version: 'v1' });
    assert.ok(patch.parameters.some((p: { name: string; in: string }) => p.name === 'fieldValidation' && p.in === 'query'));
    assert.ok(v3('apis/apps/v1').paths['/apis/apps/v1/deployments']);
    assert.ok(v3('api/v1').paths['/api/v1/nodes/{name}']);
  });

  it('indexes every group/version by a hash that changes with the document', () => {
    const index = JSON.parse(docs.v3Index.json) as { paths: Record<string, { serverRelativeURL: string }> };
    assert.deepEqual(Object.keys(index.paths).sort(), [...new Set(kinds.map(groupVersionPath))].sort());
    assert.equal(index.paths['api/v1']!.serverRelativeURL, `/openapi/v3/api/v1?hash=${docs.v3.get('api/v1')!.hash}`);
    assert.notEqual(docs.v3.get('api/v1')!.hash, docs.v3.get('apis/apps/v1')!.hash);
  });

  it('builds once per kind list, and again for a new list', () => {
    assert.equal(openApiDocuments(kinds), openApiDocuments(kinds));
    const fewer = kinds.slice(0, 3);
    assert.notEqual(openApiDocuments(fewer), openApiDocuments(kinds));
    assert.equal(openApiDocuments(fewer).v3.size, 1);
  });
});

describe('OpenAPI v2 document', () => {
  it('is swagger 2.0 with the same definition names and refs under #/definitions', () => {
    const doc = JSON.parse(docs.v2.json) as { swagger: string; definitions: Record<string, Json> };
    assert.equal(doc.swagger, '2.0');
    for (const def of kinds) assert.ok(doc.definitions[kindDefinitionName(def)]?.['x-kubernetes-group-version-kind'], def.kind);
    const pod = doc.definitions['io.k8s.api.core.v1.Pod']!;
    assert.equal(pod.properties.spec.$ref, '#/definitions/io.k8s.api.core.v1.PodSpec');
    assert.equal(pod.properties.spec.allOf, undefined);
    assert.ok(!docs.v2.json.includes('#/components/schemas/'));
  });
});
