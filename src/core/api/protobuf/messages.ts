// The Kubernetes protobuf messages minik8s reads, as a table of field numbers and types (Kubernetes' published numbering), and the kinds each envelope may hold.

/**
 * One line per field: `NUMBER jsonName TYPE`. TYPE is a scalar (string, bytes, bool, int32,
 * int64, double) or a message name, with a prefix saying how it is carried:
 * - `[]T`: repeated;
 * - `{}T`: a map from string to T (repeated entries, key = 1, value = 2);
 * - `*T`: a Go pointer field: sent only when set, so a zero value on the wire is kept
 *   (`replicas: 0`); unmarked scalars are Go value fields, sent always, and their zero value is
 *   left out as JSON's omitempty leaves it out;
 * - `~T`: an embedded struct whose fields JSON inlines into the parent (a selector's `name`).
 * Quantity, IntOrString and Time are read into their JSON forms (a string; a number or string;
 * an RFC 3339 time). A field not listed here is skipped, as protobuf readers skip unknown fields.
 */
export const MESSAGES: Readonly<Record<string, readonly string[]>> = {
  // The envelope: `k8s\0` then a runtime.Unknown.
  Unknown: ['1 typeMeta TypeMeta', '2 raw bytes', '3 contentEncoding string', '4 contentType string'],
  TypeMeta: ['1 apiVersion string', '2 kind string'],

  // meta/v1
  ObjectMeta: [
    '1 name string',
    '2 generateName string',
    '3 namespace string',
    '4 selfLink string',
    '5 uid string',
    '6 resourceVersion string',
    '7 generation int64',
    '8 creationTimestamp Time',
    '9 deletionTimestamp *Time',
    '10 deletionGracePeriodSeconds *int64',
    '11 labels {}string',
    '12 annotations {}string',
    '13 ownerReferences []OwnerReference',
    '14 finalizers []string',
  ],
  OwnerReference: ['1 kind string', '3 name string', '4 uid string', '5 apiVersion string', '6 controller *bool', '7 blockOwnerDeletion *bool'],
  LabelSelector: ['1 matchLabels {}string', '2 matchExpressions []LabelSelectorRequirement'],
  LabelSelectorRequirement: ['1 key string', '2 operator string', '3 values []string'],
  DeleteOptions: [
    '1 gracePeriodSeconds *int64',
    '2 preconditions *Preconditions',
    '3 orphanDependents *bool',
    '4 propagationPolicy *string',
    '5 dryRun []string',
  ],
  Preconditions: ['1 uid *string', '2 resourceVersion *string'],
  Time: ['1 seconds int64', '2 nanos int32'],
  IntOrString: ['1 type int64', '2 intVal int32', '3 strVal string'],
  Quantity: ['1 string string'],

  // core/v1
  Namespace: ['1 metadata ObjectMeta', '2 spec NamespaceSpec', '3 status NamespaceStatus'],
  NamespaceSpec: ['1 finalizers []string'],
  NamespaceStatus: ['1 phase string'],
  ConfigMap: ['1 metadata ObjectMeta', '2 data {}string', '3 binaryData {}bytes', '4 immutable *bool'],
  Secret: ['1 metadata ObjectMeta', '2 data {}bytes', '3 type string', '4 stringData {}string', '5 immutable *bool'],
  Binding: ['1 metadata ObjectMeta', '2 target ObjectReference'],
  ObjectReference: [
    '1 kind string',
    '2 namespace string',
    '3 name string',
    '4 uid string',
    '5 apiVersion string',
    '6 resourceVersion string',
    '7 fieldPath string',
  ],
  LocalObjectReference: ['1 name string'],
  Pod: ['1 metadata ObjectMeta', '2 spec PodSpec', '3 status EmptyStatus'],
  PodTemplateSpec: ['1 metadata ObjectMeta', '2 spec PodSpec'],
  PodSpec: [
    '1 volumes []Volume',
    '2 containers []Container',
    '3 restartPolicy string',
    '4 terminationGracePeriodSeconds *int64',
    '5 activeDeadlineSeconds *int64',
    '6 dnsPolicy string',
    '7 nodeSelector {}string',
    '8 serviceAccountName string',
    '9 serviceAccount string',
    '10 nodeName string',
    '11 hostNetwork bool',
    '12 hostPID bool',
    '13 hostIPC bool',
    '14 securityContext *PodSecurityContext',
    '15 imagePullSecrets []LocalObjectReference',
    '16 hostname string',
    '17 subdomain string',
    '19 schedulerName string',
    '20 initContainers []Container',
    '21 automountServiceAccountToken *bool',
    '22 tolerations []Toleration',
    '24 priorityClassName string',
    '25 priority *int32',
    '27 shareProcessNamespace *bool',
    '29 runtimeClassName *string',
    '30 enableServiceLinks *bool',
    '31 preemptionPolicy *string',
    '35 setHostnameAsFQDN *bool',
    '37 hostUsers *bool',
  ],
  Container: [
    '1 name string',
    '2 image string',
    '3 command []string',
    '4 args []string',
    '5 workingDir string',
    '6 ports []ContainerPort',
    '7 env []EnvVar',
    '8 resources ResourceRequirements',
    '9 volumeMounts []VolumeMount',
    '10 livenessProbe *Probe',
    '11 readinessProbe *Probe',
    '12 lifecycle *Lifecycle',
    '13 terminationMessagePath string',
    '14 imagePullPolicy string',
    '15 securityContext *SecurityContext',
    '16 stdin bool',
    '17 stdinOnce bool',
    '18 tty bool',
    '19 envFrom []EnvFromSource',
    '20 terminationMessagePolicy string',
    '22 startupProbe *Probe',
    '24 restartPolicy *string',
  ],
  ContainerPort: ['1 name string', '2 hostPort int32', '3 containerPort int32', '4 protocol string', '5 hostIP string'],
  EnvVar: ['1 name string', '2 value string', '3 valueFrom *EnvVarSource'],
  EnvVarSource: [
    '1 fieldRef *ObjectFieldSelector',
    '2 resourceFieldRef *ResourceFieldSelector',
    '3 configMapKeyRef *KeySelector',
    '4 secretKeyRef *KeySelector',
  ],
  ObjectFieldSelector: ['1 apiVersion string', '2 fieldPath string'],
  ResourceFieldSelector: ['1 containerName string', '2 resource string', '3 divisor Quantity'],
  // ConfigMapKeySelector and SecretKeySelector share one layout.
  KeySelector: ['1 localObjectReference ~LocalObjectReference', '2 key string', '3 optional *bool'],
  EnvFromSource: ['1 prefix string', '2 configMapRef *EnvSource', '3 secretRef *EnvSource'],
  EnvSource: ['1 localObjectReference ~LocalObjectReference', '2 optional *bool'],
  ResourceRequirements: ['1 limits {}Quantity', '2 requests {}Quantity'],
  VolumeMount: ['1 name string', '2 readOnly bool', '3 mountPath string', '4 subPath string', '5 mountPropagation *string', '6 subPathExpr string'],
  Volume: ['1 name string', '2 volumeSource ~VolumeSource'],
  VolumeSource: [
    '1 hostPath *HostPathVolumeSource',
    '2 emptyDir *EmptyDirVolumeSource',
    '6 secret *SecretVolumeSource',
    '10 persistentVolumeClaim *PersistentVolumeClaimVolumeSource',
    '19 configMap *ConfigMapVolumeSource',
    '16 downwardAPI *DownwardAPIVolumeSource',
    '26 projected *ProjectedVolumeSource',
  ],
  HostPathVolumeSource: ['1 path string', '2 type *string'],
  EmptyDirVolumeSource: ['1 medium string', '2 sizeLimit *Quantity'],
  SecretVolumeSource: ['1 secretName string', '2 items []KeyToPath', '3 defaultMode *int32', '4 optional *bool'],
  ConfigMapVolumeSource: ['1 localObjectReference ~LocalObjectReference', '2 items []KeyToPath', '3 defaultMode *int32', '4 optional *bool'],
  PersistentVolumeClaimVolumeSource: ['1 claimName string', '2 readOnly bool'],
  KeyToPath: ['1 key string', '2 path string', '3 mode *int32'],
  DownwardAPIVolumeSource: ['1 items []DownwardAPIVolumeFile', '2 defaultMode *int32'],
  DownwardAPIVolumeFile: ['1 path string', '2 fieldRef *ObjectFieldSelector', '3 resourceFieldRef *ResourceFieldSelector', '4 mode *int32'],
  ProjectedVolumeSource: ['1 sources []VolumeProjection', '2 defaultMode *int32'],
  VolumeProjection: [
    '1 secret *SecretProjection',
    '2 downwardAPI *DownwardAPIProjection',
    '3 configMap *ConfigMapProjection',
    '4 serviceAccountToken *ServiceAccountTokenProjection',
  ],
  SecretProjection: ['1 localObjectReference ~LocalObjectReference', '2 items []KeyToPath', '4 optional *bool'],
  ConfigMapProjection: ['1 localObjectReference ~LocalObjectReference', '2 items []KeyToPath', '4 optional *bool'],
  DownwardAPIProjection: ['1 items []DownwardAPIVolumeFile'],
  ServiceAccountTokenProjection: ['1 audience string', '2 expirationSeconds *int64', '3 path string'],
  Probe: [
    '1 handler ~ProbeHandler',
    '2 initialDelaySeconds int32',
    '3 timeoutSeconds int32',
    '4 periodSeconds int32',
    '5 successThreshold int32',
    '6 failureThreshold int32',
    '7 terminationGracePeriodSeconds *int64',
  ],
  ProbeHandler: ['1 exec *ExecAction', '2 httpGet *HTTPGetAction', '3 tcpSocket *TCPSocketAction', '4 grpc *GRPCAction'],
  Lifecycle: ['1 postStart *LifecycleHandler', '2 preStop *LifecycleHandler'],
  LifecycleHandler: ['1 exec *ExecAction', '2 httpGet *HTTPGetAction', '3 tcpSocket *TCPSocketAction', '4 sleep *SleepAction'],
  ExecAction: ['1 command []string'],
  HTTPGetAction: ['1 path string', '2 port IntOrString', '3 host string', '4 scheme string', '5 httpHeaders []HTTPHeader'],
  HTTPHeader: ['1 name string', '2 value string'],
  TCPSocketAction: ['1 port IntOrString', '2 host string'],
  GRPCAction: ['1 port int32', '2 service *string'],
  SleepAction: ['1 seconds int64'],
  SecurityContext: [
    '1 capabilities *Capabilities',
    '2 privileged *bool',
    '4 runAsUser *int64',
    '5 runAsNonRoot *bool',
    '6 readOnlyRootFilesystem *bool',
    '7 allowPrivilegeEscalation *bool',
    '8 runAsGroup *int64',
  ],
  Capabilities: ['1 add []string', '2 drop []string'],
  PodSecurityContext: ['2 runAsUser *int64', '3 runAsNonRoot *bool', '4 supplementalGroups []int64', '5 fsGroup *int64', '6 runAsGroup *int64'],
  Toleration: ['1 key string', '2 operator string', '3 value string', '4 effect string', '5 tolerationSeconds *int64'],
  Service: ['1 metadata ObjectMeta', '2 spec ServiceSpec', '3 status EmptyStatus'],
  ServiceSpec: [
    '1 ports []ServicePort',
    '2 selector {}string',
    '3 clusterIP string',
    '4 type string',
    '5 externalIPs []string',
    '7 sessionAffinity string',
    '8 loadBalancerIP string',
    '9 loadBalancerSourceRanges []string',
    '10 externalName string',
    '11 externalTrafficPolicy string',
    '12 healthCheckNodePort int32',
    '13 publishNotReadyAddresses bool',
    '17 ipFamilyPolicy *string',
    '18 clusterIPs []string',
    '19 ipFamilies []string',
    '20 allocateLoadBalancerNodePorts *bool',
    '21 loadBalancerClass *string',
    '22 internalTrafficPolicy *string',
  ],
  ServicePort: ['1 name string', '2 protocol string', '3 port int32', '4 targetPort IntOrString', '5 nodePort int32', '6 appProtocol *string'],
  // A create's status is ignored, so no status is read: the object says `status: {}` as a JSON client's does.
  EmptyStatus: [],

  // apps/v1
  Deployment: ['1 metadata ObjectMeta', '2 spec DeploymentSpec', '3 status EmptyStatus'],
  DeploymentSpec: [
    '1 replicas *int32',
    '2 selector *LabelSelector',
    '3 template PodTemplateSpec',
    '4 strategy DeploymentStrategy',
    '5 minReadySeconds int32',
    '6 revisionHistoryLimit *int32',
    '7 paused bool',
    '9 progressDeadlineSeconds *int32',
  ],
  DeploymentStrategy: ['1 type string', '2 rollingUpdate *RollingUpdateDeployment'],
  RollingUpdateDeployment: ['1 maxUnavailable *IntOrString', '2 maxSurge *IntOrString'],
  ReplicaSet: ['1 metadata ObjectMeta', '2 spec ReplicaSetSpec', '3 status EmptyStatus'],
  ReplicaSetSpec: ['1 replicas *int32', '2 selector *LabelSelector', '3 template PodTemplateSpec', '4 minReadySeconds int32'],

  // batch/v1
  Job: ['1 metadata ObjectMeta', '2 spec JobSpec', '3 status EmptyStatus'],
  JobSpec: [
    '1 parallelism *int32',
    '2 completions *int32',
    '3 activeDeadlineSeconds *int64',
    '4 selector *LabelSelector',
    '5 manualSelector *bool',
    '6 template PodTemplateSpec',
    '7 backoffLimit *int32',
    '8 ttlSecondsAfterFinished *int32',
    '9 completionMode *string',
    '10 suspend *bool',
  ],
  CronJob: ['1 metadata ObjectMeta', '2 spec CronJobSpec', '3 status EmptyStatus'],
  CronJobSpec: [
    '1 schedule string',
    '2 startingDeadlineSeconds *int64',
    '3 concurrencyPolicy string',
    '4 suspend *bool',
    '5 jobTemplate JobTemplateSpec',
    '6 successfulJobsHistoryLimit *int32',
    '7 failedJobsHistoryLimit *int32',
    '8 timeZone *string',
  ],
  JobTemplateSpec: ['1 metadata ObjectMeta', '2 spec JobSpec'],

  // policy/v1
  Eviction: ['1 metadata ObjectMeta', '2 deleteOptions *DeleteOptions'],

  // v1 ServiceAccount (kubectl create serviceaccount) and authentication/v1 TokenRequest (kubectl create token)
  ServiceAccount: ['1 metadata ObjectMeta', '2 secrets []ObjectReference', '3 imagePullSecrets []LocalObjectReference', '4 automountServiceAccountToken *bool'],
  TokenRequest: ['1 metadata ObjectMeta', '2 spec TokenRequestSpec'],
  TokenRequestSpec: ['1 audiences []string', '3 boundObjectRef *BoundObjectReference', '4 expirationSeconds *int64'],
  BoundObjectReference: ['1 kind string', '2 apiVersion string', '3 name string', '4 uid string'],
  // kubectl auth whoami
  SelfSubjectReview: ['1 metadata ObjectMeta'],

  // authorization/v1: kubectl auth can-i
  SelfSubjectAccessReview: ['1 metadata ObjectMeta', '2 spec SelfSubjectAccessReviewSpec'],
  SelfSubjectAccessReviewSpec: ['1 resourceAttributes *ResourceAttributes', '2 nonResourceAttributes *NonResourceAttributes'],
  ResourceAttributes: [
    '1 namespace string',
    '2 verb string',
    '3 group string',
    '4 version string',
    '5 resource string',
    '6 subresource string',
    '7 name string',
  ],
  NonResourceAttributes: ['1 path string', '2 verb string'],
  // kubectl auth can-i --list
  SelfSubjectRulesReview: ['1 metadata ObjectMeta', '2 spec SelfSubjectRulesReviewSpec'],
  SelfSubjectRulesReviewSpec: ['1 namespace string'],

  // certificates/v1: kubectl create -f csr.yaml, kubectl certificate approve|deny (a PUT of the whole object to /approval)
  CertificateSigningRequest: ['1 metadata ObjectMeta', '2 spec CertificateSigningRequestSpec', '3 status CertificateSigningRequestStatus'],
  CertificateSigningRequestSpec: [
    '1 request bytes',
    '2 username string',
    '3 uid string',
    '4 groups []string',
    '5 usages []string',
    '7 signerName string',
    '8 expirationSeconds *int32',
  ],
  CertificateSigningRequestStatus: ['1 conditions []CertificateSigningRequestCondition', '2 certificate bytes'],
  CertificateSigningRequestCondition: [
    '1 type string',
    '6 status string',
    '2 reason string',
    '3 message string',
    '4 lastUpdateTime Time',
    '5 lastTransitionTime Time',
  ],
};

/** The kinds a protobuf body may hold, by `apiVersion kind`, and the message each is read as. */
export const PROTOBUF_KINDS: Readonly<Record<string, string>> = {
  'v1 Namespace': 'Namespace',
  'v1 ConfigMap': 'ConfigMap',
  'v1 Secret': 'Secret',
  'v1 Pod': 'Pod',
  'v1 Service': 'Service',
  'v1 Binding': 'Binding',
  'v1 DeleteOptions': 'DeleteOptions',
  'meta.k8s.io/v1 DeleteOptions': 'DeleteOptions',
  'apps/v1 Deployment': 'Deployment',
  'apps/v1 ReplicaSet': 'ReplicaSet',
  'batch/v1 Job': 'Job',
  'batch/v1 CronJob': 'CronJob',
  'policy/v1 Eviction': 'Eviction',
  'v1 ServiceAccount': 'ServiceAccount',
  'authentication.k8s.io/v1 TokenRequest': 'TokenRequest',
  'authentication.k8s.io/v1 SelfSubjectReview': 'SelfSubjectReview',
  'authorization.k8s.io/v1 SelfSubjectAccessReview': 'SelfSubjectAccessReview',
  'authorization.k8s.io/v1 SelfSubjectRulesReview': 'SelfSubjectRulesReview',
  'certificates.k8s.io/v1 CertificateSigningRequest': 'CertificateSigningRequest',
};

export type Scalar = 'string' | 'bytes' | 'bool' | 'int32' | 'int64' | 'double';
const SCALARS: ReadonlySet<string> = new Set<Scalar>(['string', 'bytes', 'bool', 'int32', 'int64', 'double']);

export interface FieldSpec {
  number: number;
  name: string;
  /** A scalar, or the name of a message in MESSAGES. */
  type: string;
  scalar: boolean;
  shape: 'single' | 'repeated' | 'map';
  /** A Go pointer field: a zero value that was sent is kept. */
  pointer: boolean;
  /** An embedded struct whose fields JSON inlines into the parent. */
  inline: boolean;
}

export interface MessageSpec {
  name: string;
  fields: readonly FieldSpec[];
  byNumber: ReadonlyMap<number, FieldSpec>;
}

function parseField(message: string, line: string): FieldSpec {
  const match = /^(\d+) (\w+) (\[\]|\{\}|\*|~)?(\w+)$/.exec(line);
  if (!match) throw new Error(`protobuf table: cannot read "${line}" in ${message}`);
  const [, number, name, prefix, type] = match as unknown as [string, string, string, string | undefined, string];
  const scalar = SCALARS.has(type);
  if (!scalar && !(type in MESSAGES)) throw new Error(`protobuf table: ${message}.${name} names unknown message ${type}`);
  return {
    number: Number(number),
    name,
    type,
    scalar,
    shape: prefix === '[]' ? 'repeated' : prefix === '{}' ? 'map' : 'single',
    pointer: prefix === '*',
    inline: prefix === '~',
  };
}

/** The table, read once into lookups by field number. */
export const MESSAGE_SPECS: ReadonlyMap<string, MessageSpec> = new Map(
  Object.entries(MESSAGES).map(([name, lines]) => {
    const fields = lines.map((line) => parseField(name, line));
    return [name, { name, fields, byNumber: new Map(fields.map((f) => [f.number, f])) }];
  }),
);
