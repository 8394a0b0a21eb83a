// Kubernetes' OpenAPI definition names (io.k8s.api.core.v1.PodSpec...) for the kinds' schemas and the types nested in them.
import type { KindDefinition } from '../kind.js';

export const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
export const OBJECT_META = `${META}.ObjectMeta`;
export const LIST_META = `${META}.ListMeta`;
export const LABEL_SELECTOR = `${META}.LabelSelector`;
export const STATUS = `${META}.Status`;
export const PATCH = `${META}.Patch`;
export const DELETE_OPTIONS = `${META}.DeleteOptions`;
export const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
export const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/**
 * The prefix of a group/version's definitions, as Kubernetes spells it: `io.k8s.api.core.v1`
 * for the core group, `io.k8s.api.apps.v1`, `io.k8s.api.discovery.v1` for `discovery.k8s.io`,
 * and the reversed domain for other groups (`io.minik8s.v1`), as CRDs get.
 */
export function definitionPrefix(group: string, version: string): string {
  if (group === '') return `io.k8s.api.core.${version}`;
  if (!group.includes('.')) return `io.k8s.api.${group}.${version}`;
  if (group.endsWith('.k8s.io')) return `io.k8s.api.${group.slice(0, -'.k8s.io'.length).split('.')[0]}.${version}`;
  return `${group.split('.').reverse().join('.')}.${version}`;
}

/** The definition name of a kind's top-level schema. */
export function kindDefinitionName(def: Pick<KindDefinition, 'group' | 'version' | 'kind'>): string {
  return `${definitionPrefix(def.group, def.version)}.${def.kind}`;
}

const CORE = 'io.k8s.api.core.v1';
const APPS = 'io.k8s.api.apps.v1';
const HPA = 'io.k8s.api.autoscaling.v2';
const DISCOVERY = 'io.k8s.api.discovery.v1';

/**
 * Named types inside named types: definition name -> field (a list's element as `field[]`) ->
 * the field's definition name. Fields not listed are inlined; a kind's `spec` and `status` are
 * named `<Kind>Spec` and `<Kind>Status` unless listed here.
 */
export const NESTED_NAMES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  [OBJECT_META]: { 'ownerReferences[]': `${META}.OwnerReference` },
  [`${CORE}.PodTemplateSpec`]: { spec: `${CORE}.PodSpec` },
  [`${CORE}.PodSpec`]: {
    'containers[]': `${CORE}.Container`,
    'initContainers[]': `${CORE}.Container`,
    'ephemeralContainers[]': `${CORE}.EphemeralContainer`,
    'volumes[]': `${CORE}.Volume`,
    'tolerations[]': `${CORE}.Toleration`,
    affinity: `${CORE}.Affinity`,
    securityContext: `${CORE}.PodSecurityContext`,
    'imagePullSecrets[]': `${CORE}.LocalObjectReference`,
    'hostAliases[]': `${CORE}.HostAlias`,
  },
  [`${CORE}.Container`]: {
    'ports[]': `${CORE}.ContainerPort`,
    'env[]': `${CORE}.EnvVar`,
    'envFrom[]': `${CORE}.EnvFromSource`,
    resources: `${CORE}.ResourceRequirements`,
    'volumeMounts[]': `${CORE}.VolumeMount`,
    livenessProbe: `${CORE}.Probe`,
    readinessProbe: `${CORE}.Probe`,
    startupProbe: `${CORE}.Probe`,
    lifecycle: `${CORE}.Lifecycle`,
    securityContext: `${CORE}.SecurityContext`,
  },
  [`${CORE}.EnvVar`]: { valueFrom: `${CORE}.EnvVarSource` },
  [`${CORE}.Probe`]: { httpGet: `${CORE}.HTTPGetAction`, tcpSocket: `${CORE}.TCPSocketAction`, exec: `${CORE}.ExecAction` },
  [`${CORE}.Lifecycle`]: { postStart: `${CORE}.LifecycleHandler`, preStop: `${CORE}.LifecycleHandler` },
  [`${CORE}.LifecycleHandler`]: { httpGet: `${CORE}.HTTPGetAction`, tcpSocket: `${CORE}.TCPSocketAction`, exec: `${CORE}.ExecAction` },
  [`${CORE}.Volume`]: {
    emptyDir: `${CORE}.EmptyDirVolumeSource`,
    hostPath: `${CORE}.HostPathVolumeSource`,
    secret: `${CORE}.SecretVolumeSource`,
    configMap: `${CORE}.ConfigMapVolumeSource`,
  },
  [`${CORE}.PodStatus`]: {
    'conditions[]': `${CORE}.PodCondition`,
    'containerStatuses[]': `${CORE}.ContainerStatus`,
    'initContainerStatuses[]': `${CORE}.ContainerStatus`,
    'podIPs[]': `${CORE}.PodIP`,
    'hostIPs[]': `${CORE}.HostIP`,
  },
  [`${CORE}.ContainerStatus`]: { state: `${CORE}.ContainerState`, lastState: `${CORE}.ContainerState` },
  [`${CORE}.ServiceSpec`]: { 'ports[]': `${CORE}.ServicePort` },
  [`${CORE}.NodeSpec`]: { 'taints[]': `${CORE}.Taint` },
  [`${CORE}.NodeStatus`]: {
    'conditions[]': `${CORE}.NodeCondition`,
    'addresses[]': `${CORE}.NodeAddress`,
    nodeInfo: `${CORE}.NodeSystemInfo`,
    daemonEndpoints: `${CORE}.NodeDaemonEndpoints`,
  },
  [`${CORE}.NamespaceStatus`]: { 'conditions[]': `${CORE}.NamespaceCondition` },
  [`${CORE}.Endpoints`]: { 'subsets[]': `${CORE}.EndpointSubset` },
  [`${CORE}.EndpointSubset`]: {
    'addresses[]': `${CORE}.EndpointAddress`,
    'notReadyAddresses[]': `${CORE}.EndpointAddress`,
    'ports[]': `${CORE}.EndpointPort`,
  },
  [`${CORE}.Event`]: { source: `${CORE}.EventSource` },
  [`${DISCOVERY}.EndpointSlice`]: { 'endpoints[]': `${DISCOVERY}.Endpoint`, 'ports[]': `${DISCOVERY}.EndpointPort` },
  [`${DISCOVERY}.Endpoint`]: { conditions: `${DISCOVERY}.EndpointConditions` },
  [`${APPS}.DeploymentSpec`]: { strategy: `${APPS}.DeploymentStrategy`, template: `${CORE}.PodTemplateSpec`, selector: LABEL_SELECTOR },
  [`${APPS}.DeploymentStrategy`]: { rollingUpdate: `${APPS}.RollingUpdateDeployment` },
  [`${APPS}.DeploymentStatus`]: { 'conditions[]': `${APPS}.DeploymentCondition` },
  [`${APPS}.ReplicaSetSpec`]: { template: `${CORE}.PodTemplateSpec`, selector: LABEL_SELECTOR },
  [`${APPS}.ReplicaSetStatus`]: { 'conditions[]': `${APPS}.ReplicaSetCondition` },
  [`${APPS}.DaemonSetSpec`]: { updateStrategy: `${APPS}.DaemonSetUpdateStrategy`, template: `${CORE}.PodTemplateSpec`, selector: LABEL_SELECTOR },
  [`${APPS}.DaemonSetUpdateStrategy`]: { rollingUpdate: `${APPS}.RollingUpdateDaemonSet` },
  [`${APPS}.DaemonSetStatus`]: { 'conditions[]': `${APPS}.DaemonSetCondition` },
  'io.k8s.api.policy.v1.PodDisruptionBudgetSpec': { selector: LABEL_SELECTOR },
  'io.k8s.api.policy.v1.PodDisruptionBudgetStatus': { 'conditions[]': `${META}.Condition` },
  [`${HPA}.HorizontalPodAutoscalerSpec`]: {
    scaleTargetRef: `${HPA}.CrossVersionObjectReference`,
    'metrics[]': `${HPA}.MetricSpec`,
    behavior: `${HPA}.HorizontalPodAutoscalerBehavior`,
  },
  [`${HPA}.HorizontalPodAutoscalerBehavior`]: { scaleUp: `${HPA}.HPAScalingRules`, scaleDown: `${HPA}.HPAScalingRules` },
  [`${HPA}.HorizontalPodAutoscalerStatus`]: {
    'conditions[]': `${HPA}.HorizontalPodAutoscalerCondition`,
    'currentMetrics[]': `${HPA}.MetricStatus`,
  },
};
