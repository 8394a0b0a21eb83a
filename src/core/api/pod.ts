// Pod (v1): the PodSpec subset users write, Kubernetes defaults, pod status, and kubectl-like columns.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { podPatchMeta } from './patch-meta.js';
import { conditionSchema, kindSchema, labelName, labelsSchema, objectMetaSchema, timestampSchema, type Condition } from './meta.js';
import { parseQuantity, quantitySchema, resourceListSchema, type ResourceList } from './quantity.js';
import { labelSelectorSchema, matches, selectorFromLabelSelector, type LabelSelector } from './selector.js';
import { duplicates, withChecks, type FieldProblem } from './validate.js';
import { downwardAPIVolumeSchema, projectedVolumeSchema } from './volume-projections.js';

// ---- Shared building blocks (also used by Service, ReplicaSet, Deployment) ----------------------

/** A whole number in [min, max]. */
export function intSchema(options: { min?: number; max?: number } = {}) {
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = options;
  return v.pipe(
    v.number(),
    v.integer('must be an integer'),
    v.minValue(min, `must be greater than or equal to ${min}`),
    v.maxValue(max, `must be less than or equal to ${max}`),
  );
}

export const portNumberSchema = intSchema({ min: 1, max: 65535 });

/** IANA service names, as Kubernetes requires of named ports: at most 15 characters, with a letter. */
export const portNameSchema = v.pipe(
  v.string(),
  v.maxLength(15, 'must be no more than 15 characters'),
  v.regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "must contain only lower-case alphanumeric characters or '-', starting and ending with an alphanumeric"),
  v.regex(/[a-z]/, 'must contain at least one letter'),
  v.check((s) => !s.includes('--'), 'must not contain consecutive hyphens'),
);

/** Kubernetes' IntOrString: a number or a string (a port name, or a percentage such as "25%"). */
export const intOrStringSchema = v.union([v.pipe(v.number(), v.integer('must be an integer')), v.string()], 'must be an integer or a string');

/** A port given as a number or by the name of a container port. */
export const portOrNameSchema = v.union([portNumberSchema, portNameSchema], 'must be a port number (1-65535) or a port name');

export const protocolSchema = v.optional(v.picklist(['TCP', 'UDP', 'SCTP']), 'TCP');

const nonNegative = intSchema({ min: 0 });

// ---- Containers --------------------------------------------------------------------------

const keyRefSchema = v.strictObject({
  name: v.optional(v.string()),
  key: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  optional: v.optional(v.boolean()),
});

const envVarSchema = withChecks(
  v.strictObject({
    name: v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.regex(
        /^[-._a-zA-Z][-._a-zA-Z0-9]*$/,
        "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit",
      ),
    ),
    value: v.optional(v.string()),
    valueFrom: v.optional(
      v.strictObject({
        fieldRef: v.optional(v.strictObject({ fieldPath: v.string(), apiVersion: v.optional(v.string()) })),
        resourceFieldRef: v.optional(v.strictObject({ containerName: v.optional(v.string()), resource: v.string(), divisor: v.optional(quantitySchema) })),
        secretKeyRef: v.optional(keyRefSchema),
        configMapKeyRef: v.optional(keyRefSchema),
      }),
    ),
  }),
  (e): FieldProblem[] => {
    if (!e.valueFrom) return [];
    const sources = Object.values(e.valueFrom).filter((s) => s !== undefined).length;
    if (e.value !== undefined && e.value !== '')
      return [{ path: ['valueFrom'], reason: 'FieldValueInvalid', detail: 'may not be specified when `value` is not empty', value: 'valueFrom' }];
    if (sources !== 1)
      return [
        {
          path: ['valueFrom'],
          reason: 'FieldValueInvalid',
          detail: 'must specify exactly one of `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
          value: '',
        },
      ];
    return [];
  },
);

const envFromSchema = v.strictObject({
  prefix: v.optional(v.string()),
  configMapRef: v.optional(v.strictObject({ name: v.string(), optional: v.optional(v.boolean()) })),
  secretRef: v.optional(v.strictObject({ name: v.string(), optional: v.optional(v.boolean()) })),
});

const containerPortSchema = v.strictObject({
  name: v.optional(portNameSchema),
  containerPort: portNumberSchema,
  hostPort: v.optional(portNumberSchema),
  hostIP: v.optional(v.string()),
  protocol: protocolSchema,
});

const httpGetSchema = v.strictObject({
  path: v.optional(v.string()),
  port: portOrNameSchema,
  host: v.optional(v.string()),
  scheme: v.optional(v.picklist(['HTTP', 'HTTPS']), 'HTTP'),
  httpHeaders: v.optional(v.array(v.strictObject({ name: v.pipe(v.string(), v.minLength(1, 'must not be empty')), value: v.string() }))),
});
const tcpSocketSchema = v.strictObject({ port: portOrNameSchema, host: v.optional(v.string()) });
const execSchema = v.strictObject({ command: v.optional(v.array(v.string())) });

const HANDLERS = ['httpGet', 'tcpSocket', 'exec'] as const;

function oneHandler(h: Partial<Record<(typeof HANDLERS)[number] | 'sleep', unknown>>, allowed: string): FieldProblem[] {
  const set = Object.entries(h).filter(([k, val]) => val !== undefined && (HANDLERS as readonly string[]).concat('sleep').includes(k));
  if (set.length === 0) return [{ path: [], reason: 'FieldValueRequired', detail: `must specify a handler type (${allowed})` }];
  if (set.length > 1) return [{ path: [set[1][0]], reason: 'FieldValueForbidden', detail: 'may not specify more than 1 handler type' }];
  return [];
}

export const probeSchema = withChecks(
  v.strictObject({
    httpGet: v.optional(httpGetSchema),
    tcpSocket: v.optional(tcpSocketSchema),
    exec: v.optional(execSchema),
    initialDelaySeconds: v.optional(nonNegative),
    periodSeconds: v.optional(intSchema({ min: 1 }), 10),
    timeoutSeconds: v.optional(intSchema({ min: 1 }), 1),
    successThreshold: v.optional(intSchema({ min: 1 }), 1),
    failureThreshold: v.optional(intSchema({ min: 1 }), 3),
    terminationGracePeriodSeconds: v.optional(intSchema({ min: 1 })),
  }),
  (p) => oneHandler(p, 'httpGet, tcpSocket or exec'),
);
export type Probe = v.InferOutput<typeof probeSchema>;

const lifecycleHandlerSchema = withChecks(
  v.strictObject({
    httpGet: v.optional(httpGetSchema),
    tcpSocket: v.optional(tcpSocketSchema),
    exec: v.optional(execSchema),
    sleep: v.optional(v.strictObject({ seconds: nonNegative })),
  }),
  (h) => oneHandler(h, 'httpGet, tcpSocket, exec or sleep'),
);

/** Kubernetes' seccomp profile: a Localhost type names a file under the node's seccomp directory, the others name none. */
const seccompProfileSchema = withChecks(
  v.strictObject({
    type: v.picklist(['RuntimeDefault', 'Unconfined', 'Localhost']),
    localhostProfile: v.optional(v.string()),
  }),
  (p): FieldProblem[] => {
    if (p.type === 'Localhost') {
      if (!p.localhostProfile) return [{ path: ['localhostProfile'], reason: 'FieldValueRequired', detail: 'must be set when seccomp type is Localhost' }];
      if (p.localhostProfile.startsWith('/') || p.localhostProfile.split('/').includes('..'))
        return [{ path: ['localhostProfile'], reason: 'FieldValueInvalid', detail: "must be a relative path without '..'" }];
      return [];
    }
    return p.localhostProfile !== undefined
      ? [{ path: ['localhostProfile'], reason: 'FieldValueInvalid', detail: 'can only be set when seccomp type is Localhost' }]
      : [];
  },
);

/** Kubernetes' sysctl names: dotted (or slashed) segments of lower-case letters, digits, '-' and '_'. */
const SYSCTL_NAME = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;
const sysctlSchema = v.strictObject({
  name: v.pipe(
    v.string(),
    v.check((s) => s.length <= 253 && SYSCTL_NAME.test(s), `must have at most 253 characters and match regex ${SYSCTL_NAME.source}`),
  ),
  value: v.string(),
});

/** The API server's checks across a container's security context fields, worded as Kubernetes words them. */
function containerSecurityContextProblems(sc: { privileged?: boolean; allowPrivilegeEscalation?: boolean; capabilities?: { add?: string[] } }): FieldProblem[] {
  if (sc.allowPrivilegeEscalation !== false) return [];
  if (sc.privileged) return [{ path: [], reason: 'FieldValueInvalid', detail: 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true' }];
  if ((sc.capabilities?.add ?? []).some((c) => ['SYS_ADMIN', 'CAP_SYS_ADMIN'].includes(c.toUpperCase())))
    return [{ path: [], reason: 'FieldValueInvalid', detail: 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN' }];
  return [];
}

const containerSecurityContextSchema = withChecks(
  v.strictObject({
    privileged: v.optional(v.boolean()),
    runAsUser: v.optional(nonNegative),
    runAsGroup: v.optional(nonNegative),
    runAsNonRoot: v.optional(v.boolean()),
    readOnlyRootFilesystem: v.optional(v.boolean()),
    allowPrivilegeEscalation: v.optional(v.boolean()),
    capabilities: v.optional(v.strictObject({ add: v.optional(v.array(v.string())), drop: v.optional(v.array(v.string())) })),
    seccompProfile: v.optional(seccompProfileSchema),
    procMount: v.optional(v.picklist(['Default', 'Unmasked'])),
  }),
  containerSecurityContextProblems,
);

const resourceRequirementsSchema = withChecks(
  v.strictObject({
    requests: v.optional(resourceListSchema),
    limits: v.optional(resourceListSchema),
  }),
  (r): FieldProblem[] =>
    Object.entries(r.requests ?? {}).flatMap(([name, q]): FieldProblem[] => {
      const limit = r.limits?.[name];
      return limit !== undefined && parseQuantity(q) > parseQuantity(limit)
        ? [{ path: ['requests', name], reason: 'FieldValueInvalid', detail: `must be less than or equal to ${name} limit of ${String(limit)}` }]
        : [];
    }),
);

const containerSchema = withChecks(
  v.strictObject({
    name: labelName,
    image: v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.check((s) => s.trim() === s, 'must not have leading or trailing whitespace'),
    ),
    imagePullPolicy: v.optional(v.picklist(['Always', 'IfNotPresent', 'Never'])),
    command: v.optional(v.array(v.string())),
    args: v.optional(v.array(v.string())),
    workingDir: v.optional(v.string()),
    env: v.optional(v.array(envVarSchema)),
    envFrom: v.optional(v.array(envFromSchema)),
    ports: v.optional(v.array(containerPortSchema)),
    resources: v.optional(resourceRequirementsSchema),
    volumeMounts: v.optional(
      v.array(
        v.strictObject({
          name: v.string(),
          mountPath: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
          readOnly: v.optional(v.boolean()),
          subPath: v.optional(
            v.pipe(
              v.string(),
              v.check((s) => !s.startsWith('/') && !s.split('/').includes('..'), "must be a relative path without '..'"),
            ),
          ),
          mountPropagation: v.optional(v.picklist(['None', 'HostToContainer', 'Bidirectional'])),
        }),
      ),
    ),
    livenessProbe: v.optional(probeSchema),
    readinessProbe: v.optional(probeSchema),
    startupProbe: v.optional(probeSchema),
    lifecycle: v.optional(v.strictObject({ postStart: v.optional(lifecycleHandlerSchema), preStop: v.optional(lifecycleHandlerSchema) })),
    securityContext: v.optional(containerSecurityContextSchema),
    stdin: v.optional(v.boolean()),
    stdinOnce: v.optional(v.boolean()),
    tty: v.optional(v.boolean()),
    terminationMessagePath: v.optional(v.string()),
    terminationMessagePolicy: v.optional(v.picklist(['File', 'FallbackToLogsOnError'])),
  }),
  (c): FieldProblem[] => [
    ...duplicates(
      c.ports ?? [],
      (p) => p.name,
      (i) => ['ports', i, 'name'],
    ),
    ...(['livenessProbe', 'startupProbe'] as const).flatMap((k): FieldProblem[] =>
      c[k] && c[k].successThreshold !== 1 ? [{ path: [k, 'successThreshold'], reason: 'FieldValueInvalid', detail: 'must be 1' }] : [],
    ),
  ],
);
export type Container = v.InferOutput<typeof containerSchema>;

// ---- Volumes -----------------------------------------------------------------------------

const keyToPathSchema = v.strictObject({ key: v.string(), path: v.string(), mode: v.optional(intSchema({ min: 0, max: 0o777 })) });

const VOLUME_SOURCES = ['emptyDir', 'hostPath', 'configMap', 'secret', 'persistentVolumeClaim', 'downwardAPI', 'projected'] as const;

const volumeSchema = withChecks(
  v.strictObject({
    name: labelName,
    emptyDir: v.optional(v.strictObject({ medium: v.optional(v.picklist(['', 'Memory'])), sizeLimit: v.optional(quantitySchema) })),
    hostPath: v.optional(
      v.strictObject({
        path: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
        type: v.optional(v.picklist(['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice'])),
      }),
    ),
    configMap: v.optional(
      v.strictObject({
        name: v.string(),
        items: v.optional(v.array(keyToPathSchema)),
        defaultMode: v.optional(intSchema({ min: 0, max: 0o777 })),
        optional: v.optional(v.boolean()),
      }),
    ),
    secret: v.optional(
      v.strictObject({
        secretName: v.string(),
        items: v.optional(v.array(keyToPathSchema)),
        defaultMode: v.optional(intSchema({ min: 0, max: 0o777 })),
        optional: v.optional(v.boolean()),
      }),
    ),
    persistentVolumeClaim: v.optional(v.strictObject({ claimName: v.string(), readOnly: v.optional(v.boolean()) })),
    downwardAPI: v.optional(downwardAPIVolumeSchema),
    projected: v.optional(projectedVolumeSchema),
  }),
  (vol): FieldProblem[] => {
    const set = VOLUME_SOURCES.filter((k) => vol[k] !== undefined);
    return set.length > 1 ? [{ path: [set[1]], reason: 'FieldValueForbidden', detail: 'may not specify more than 1 volume type' }] : [];
  },
);
export type Volume = v.InferOutput<typeof volumeSchema>;

// ---- Scheduling --------------------------------------------------------------------------

const nodeSelectorRequirementSchema = withChecks(
  v.strictObject({
    key: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
    operator: v.picklist(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']),
    values: v.optional(v.array(v.string())),
  }),
  (r): FieldProblem[] => {
    const n = r.values?.length ?? 0;
    if ((r.operator === 'In' || r.operator === 'NotIn') && n === 0)
      return [{ path: ['values'], reason: 'FieldValueRequired', detail: "must be specified when `operator` is 'In' or 'NotIn'" }];
    if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && n > 0)
      return [{ path: ['values'], reason: 'FieldValueForbidden', detail: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'" }];
    if ((r.operator === 'Gt' || r.operator === 'Lt') && (n !== 1 || !/^-?\d+$/.test(r.values![0])))
      return [{ path: ['values'], reason: 'FieldValueRequired', detail: "must be a single integer when `operator` is 'Gt' or 'Lt'" }];
    return [];
  },
);

export const nodeSelectorTermSchema = v.strictObject({
  matchExpressions: v.optional(v.array(nodeSelectorRequirementSchema)),
  matchFields: v.optional(v.array(nodeSelectorRequirementSchema)),
});
export type NodeSelectorTerm = v.InferOutput<typeof nodeSelectorTermSchema>;

const podAffinityTermSchema = v.strictObject({
  labelSelector: v.optional(labelSelectorSchema),
  namespaces: v.optional(v.array(v.string())),
  namespaceSelector: v.optional(labelSelectorSchema),
  topologyKey: v.pipe(v.string(), v.minLength(1, 'can not be empty')),
});
export type PodAffinityTerm = v.InferOutput<typeof podAffinityTermSchema>;

const weight = intSchema({ min: 1, max: 100 });

const podAffinitySchema = v.strictObject({
  requiredDuringSchedulingIgnoredDuringExecution: v.optional(v.array(podAffinityTermSchema)),
  preferredDuringSchedulingIgnoredDuringExecution: v.optional(v.array(v.strictObject({ weight, podAffinityTerm: podAffinityTermSchema }))),
});

export const affinitySchema = v.strictObject({
  nodeAffinity: v.optional(
    v.strictObject({
      requiredDuringSchedulingIgnoredDuringExecution: v.optional(
        v.strictObject({
          nodeSelectorTerms: v.pipe(v.array(nodeSelectorTermSchema), v.minLength(1, 'must have at least one node selector term')),
        }),
      ),
      preferredDuringSchedulingIgnoredDuringExecution: v.optional(v.array(v.strictObject({ weight, preference: nodeSelectorTermSchema }))),
    }),
  ),
  podAffinity: v.optional(podAffinitySchema),
  podAntiAffinity: v.optional(podAffinitySchema),
});
export type Affinity = v.InferOutput<typeof affinitySchema>;

export const tolerationSchema = withChecks(
  v.strictObject({
    key: v.optional(v.string()),
    operator: v.optional(v.picklist(['Exists', 'Equal'])),
    value: v.optional(v.string()),
    effect: v.optional(v.picklist(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'])),
    tolerationSeconds: v.optional(v.pipe(v.number(), v.integer('must be an integer'))),
  }),
  (t): FieldProblem[] => {
    if (!t.key && t.operator !== 'Exists')
      return [
        {
          path: ['operator'],
          reason: 'FieldValueInvalid',
          detail: 'operator must be Exists when `key` is empty, which means "match all values and all keys"',
          value: t.operator ?? 'Equal',
        },
      ];
    if (t.operator === 'Exists' && t.value)
      return [{ path: ['operator'], reason: 'FieldValueInvalid', detail: "value must be empty when `operator` is 'Exists'", value: 'Exists' }];
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute')
      return [{ path: ['effect'], reason: 'FieldValueInvalid', detail: "effect must be 'NoExecute' when `tolerationSeconds` is set", value: t.effect ?? '' }];
    return [];
  },
);
export type Toleration = v.InferOutput<typeof tolerationSchema>;

// ---- PodSpec -----------------------------------------------------------------------------

const podSpecBaseSchema = v.strictObject({
  containers: v.array(containerSchema),
  initContainers: v.optional(v.array(containerSchema)),
  volumes: v.optional(v.array(volumeSchema)),
  restartPolicy: v.optional(v.picklist(['Always', 'OnFailure', 'Never']), 'Always'),
  terminationGracePeriodSeconds: v.optional(nonNegative, 30),
  activeDeadlineSeconds: v.optional(intSchema({ min: 1 })),
  dnsPolicy: v.optional(v.picklist(['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None']), 'ClusterFirst'),
  dnsConfig: v.optional(
    v.strictObject({
      nameservers: v.optional(v.array(v.string())),
      searches: v.optional(v.array(v.string())),
      options: v.optional(v.array(v.strictObject({ name: v.string(), value: v.optional(v.string()) }))),
    }),
  ),
  nodeSelector: v.optional(labelsSchema),
  serviceAccountName: v.optional(v.string()),
  serviceAccount: v.optional(v.string()),
  automountServiceAccountToken: v.optional(v.boolean()),
  nodeName: v.optional(v.string()),
  hostNetwork: v.optional(v.boolean()),
  hostPID: v.optional(v.boolean()),
  hostIPC: v.optional(v.boolean()),
  shareProcessNamespace: v.optional(v.boolean()),
  securityContext: v.optional(
    withChecks(
      v.strictObject({
        runAsUser: v.optional(nonNegative),
        runAsGroup: v.optional(nonNegative),
        runAsNonRoot: v.optional(v.boolean()),
        fsGroup: v.optional(nonNegative),
        supplementalGroups: v.optional(v.array(nonNegative)),
        sysctls: v.optional(v.array(sysctlSchema)),
        supplementalGroupsPolicy: v.optional(v.picklist(['Merge', 'Strict'])),
        fsGroupChangePolicy: v.optional(v.picklist(['OnRootMismatch', 'Always'])),
        seccompProfile: v.optional(seccompProfileSchema),
      }),
      (sc) =>
        duplicates(
          sc.sysctls ?? [],
          (s) => s.name,
          (i) => ['sysctls', i, 'name'],
        ),
    ),
  ),
  imagePullSecrets: v.optional(v.array(v.strictObject({ name: v.string() }))),
  hostname: v.optional(labelName),
  subdomain: v.optional(labelName),
  affinity: v.optional(affinitySchema),
  schedulerName: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty')), 'default-scheduler'),
  tolerations: v.optional(v.array(tolerationSchema)),
  hostAliases: v.optional(v.array(v.strictObject({ ip: v.string(), hostnames: v.optional(v.array(v.string())) }))),
  priorityClassName: v.optional(v.string()),
  priority: v.optional(v.pipe(v.number(), v.integer('must be an integer'))),
  preemptionPolicy: v.optional(v.picklist(['PreemptLowerPriority', 'Never'])),
  enableServiceLinks: v.optional(v.boolean()),
  runtimeClassName: v.optional(v.string()),
  /** Conditions (set by other controllers in status.conditions) that must be True too before the pod is Ready. */
  readinessGates: v.optional(v.array(v.strictObject({ conditionType: v.pipe(v.string(), v.minLength(1, 'must not be empty')) }))),
});

function podSpecProblems(spec: v.InferOutput<typeof podSpecBaseSchema>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (spec.containers.length === 0) problems.push({ path: ['containers'], reason: 'FieldValueRequired', detail: 'must have at least one container' });
  // Names are unique across init and app containers: both share the pod's namespaces and logs.
  const named = [
    ...(spec.initContainers ?? []).map((c, i) => ({ name: c.name, path: ['initContainers', i, 'name'] })),
    ...spec.containers.map((c, i) => ({ name: c.name, path: ['containers', i, 'name'] })),
  ];
  problems.push(
    ...duplicates(
      named,
      (n) => n.name,
      (i) => named[i].path,
    ),
  );
  const volumes = spec.volumes ?? [];
  problems.push(
    ...duplicates(
      volumes,
      (vol) => vol.name,
      (i) => ['volumes', i, 'name'],
    ),
  );
  const volumeNames = new Set(volumes.map((vol) => vol.name));
  for (const list of ['initContainers', 'containers'] as const) {
    (spec[list] ?? []).forEach((c, ci) => {
      (c.volumeMounts ?? []).forEach((m, mi) => {
        if (!volumeNames.has(m.name))
          problems.push({ path: [list, ci, 'volumeMounts', mi, 'name'], reason: 'FieldValueNotFound', detail: 'must match the name of a volume' });
      });
    });
  }
  return problems;
}

/** The image's tag, if any (a registry port such as `localhost:5000/x` is not a tag). */
function imageTag(image: string): string | undefined {
  const withoutDigest = image.split('@')[0];
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  return colon >= 0 ? withoutDigest.slice(colon + 1) : undefined;
}

/** Kubernetes' default: Always for `:latest` or untagged images (they may change), else IfNotPresent. Digests never change. */
export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  if (image.includes('@')) return 'IfNotPresent';
  const tag = imageTag(image);
  return tag === undefined || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: Container): Container {
  const out: Container = { ...c, imagePullPolicy: c.imagePullPolicy ?? defaultPullPolicy(c.image) };
  // As Kubernetes: a limit without a request means the request equals the limit.
  if (c.resources?.limits) {
    const requests: ResourceList = { ...c.resources.limits, ...c.resources.requests };
    out.resources = { ...c.resources, requests };
  }
  return out;
}

/**
 * The defaults that depend on other fields (static ones are in the schema): image pull
 * policy from the image tag, requests from limits, and an emptyDir for a volume without a source.
 */
export function defaultPodSpec(spec: PodSpec): PodSpec {
  return {
    ...spec,
    containers: spec.containers.map(defaultContainer),
    ...(spec.initContainers ? { initContainers: spec.initContainers.map(defaultContainer) } : {}),
    ...(spec.volumes ? { volumes: spec.volumes.map((vol) => (VOLUME_SOURCES.some((k) => vol[k] !== undefined) ? vol : { ...vol, emptyDir: {} })) } : {}),
  };
}

export const podSpecSchema = v.pipe(
  withChecks(podSpecBaseSchema, podSpecProblems),
  v.transform((spec) => defaultPodSpec(spec)),
);
export type PodSpec = v.InferOutput<typeof podSpecBaseSchema>;

// ---- Templates (ReplicaSet, Deployment) ----------------------------------------------------

export const podTemplateSpecSchema = v.strictObject({
  metadata: v.optional(objectMetaSchema, {}),
  spec: podSpecSchema,
});
export type PodTemplateSpec = v.InferOutput<typeof podTemplateSpecSchema>;

/** Workload specs: the selector must not be empty and must select the pods the template makes. */
export function selectorMatchesTemplate(spec: { selector: LabelSelector; template: PodTemplateSpec }): FieldProblem[] {
  const s = spec.selector;
  if (Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0) {
    return [{ path: ['selector'], reason: 'FieldValueInvalid', detail: 'empty selector is invalid', value: '' }];
  }
  const labels = spec.template.metadata.labels ?? {};
  let ok: boolean;
  try {
    ok = matches(selectorFromLabelSelector(s), labels);
  } catch {
    ok = false;
  }
  if (ok) return [];
  const shown = Object.entries(labels)
    .map(([k, val]) => `${k}=${val}`)
    .join(',');
  return [{ path: ['template', 'metadata', 'labels'], reason: 'FieldValueInvalid', detail: '`selector` does not match template `labels`', value: shown }];
}

// ---- Status ------------------------------------------------------------------------------

export const containerStateSchema = v.strictObject({
  waiting: v.optional(v.strictObject({ reason: v.optional(v.string()), message: v.optional(v.string()) })),
  running: v.optional(v.strictObject({ startedAt: v.optional(timestampSchema) })),
  terminated: v.optional(
    v.strictObject({
      exitCode: v.pipe(v.number(), v.integer('must be an integer')),
      signal: v.optional(v.pipe(v.number(), v.integer('must be an integer'))),
      reason: v.optional(v.string()),
      message: v.optional(v.string()),
      startedAt: v.optional(v.nullable(timestampSchema)),
      finishedAt: v.optional(v.nullable(timestampSchema)),
      containerID: v.optional(v.string()),
    }),
  ),
});
export type ContainerState = v.InferOutput<typeof containerStateSchema>;

export const containerStatusSchema = v.strictObject({
  name: v.string(),
  state: v.optional(containerStateSchema),
  lastState: v.optional(containerStateSchema),
  ready: v.optional(v.boolean(), false),
  started: v.optional(v.boolean()),
  restartCount: v.optional(nonNegative, 0),
  image: v.optional(v.string()),
  imageID: v.optional(v.string()),
  containerID: v.optional(v.string()),
  user: v.optional(
    v.strictObject({
      linux: v.optional(v.strictObject({ uid: nonNegative, gid: nonNegative, supplementalGroups: v.optional(v.array(nonNegative)) })),
    }),
  ),
});
export type ContainerStatus = v.InferOutput<typeof containerStatusSchema>;

const ipEntry = v.strictObject({ ip: v.string() });

export const podStatusSchema = v.strictObject({
  phase: v.optional(v.picklist(['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']), 'Pending'),
  conditions: v.optional(v.array(conditionSchema)),
  message: v.optional(v.string()),
  reason: v.optional(v.string()),
  nominatedNodeName: v.optional(v.string()),
  hostIP: v.optional(v.string()),
  hostIPs: v.optional(v.array(ipEntry)),
  podIP: v.optional(v.string()),
  podIPs: v.optional(v.array(ipEntry)),
  startTime: v.optional(timestampSchema),
  initContainerStatuses: v.optional(v.array(containerStatusSchema)),
  containerStatuses: v.optional(v.array(containerStatusSchema)),
  qosClass: v.optional(v.picklist(['Guaranteed', 'Burstable', 'BestEffort'])),
});
export type PodStatus = v.InferOutput<typeof podStatusSchema>;

export const podSchema = kindSchema('v1', 'Pod', {
  spec: podSpecSchema,
  status: v.optional(podStatusSchema, {}),
});
export type Pod = v.InferOutput<typeof podSchema>;

/** Kubernetes' QoS class: Guaranteed (cpu and memory limits equal requests everywhere), BestEffort (nothing set), else Burstable. */
export function podQosClass(spec: Pick<PodSpec, 'containers' | 'initContainers'>): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const all = [...(spec.initContainers ?? []), ...spec.containers];
  const anySet = all.some((c) => Object.keys(c.resources?.requests ?? {}).length + Object.keys(c.resources?.limits ?? {}).length > 0);
  if (!anySet) return 'BestEffort';
  const guaranteed = all.every((c) =>
    (['cpu', 'memory'] as const).every((r) => {
      const limit = c.resources?.limits?.[r];
      const request = c.resources?.requests?.[r] ?? limit;
      return limit !== undefined && request !== undefined && parseQuantity(limit) === parseQuantity(request);
    }),
  );
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

// ---- Printing ----------------------------------------------------------------------------

/** kubectl's STATUS column: init progress, a container's waiting or terminated reason, Terminating, or the phase. */
export function podDisplayStatus(pod: Pod): string {
  const status = pod.status ?? {};
  let reason = status.reason || status.phase || 'Pending';
  let initializing = false;
  const inits = status.initContainerStatuses ?? [];
  const initTotal = pod.spec.initContainers?.length ?? inits.length;
  for (const [i, c] of inits.entries()) {
    const t = c.state?.terminated;
    const w = c.state?.waiting;
    if (t && t.exitCode === 0) continue;
    initializing = true;
    if (t) reason = `Init:${t.reason || (t.signal ? `Signal:${t.signal}` : `ExitCode:${t.exitCode}`)}`;
    else if (w?.reason && w.reason !== 'PodInitializing') reason = `Init:${w.reason}`;
    else reason = `Init:${i}/${initTotal}`;
    break;
  }
  if (!initializing) {
    let hasRunning = false;
    for (const c of [...(status.containerStatuses ?? [])].reverse()) {
      const { waiting: w, terminated: t, running: r } = c.state ?? {};
      if (w?.reason) reason = w.reason;
      else if (t) reason = t.reason || (t.signal ? `Signal:${t.signal}` : `ExitCode:${t.exitCode}`);
      else if (r && c.ready) hasRunning = true;
    }
    // A pod whose other containers finished but one still runs is shown as Running, as kubectl does.
    if (reason === 'Completed' && hasRunning) reason = 'Running';
  }
  if (pod.metadata.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

/** kubectl's READINESS GATES cell: how many of the pod's gates have a True condition, of how many; `<none>` without gates. */
export function readinessGatesCell(pod: Pod): string {
  const gates = pod.spec.readinessGates ?? [];
  if (gates.length === 0) return '<none>';
  const conditions = pod.status?.conditions ?? [];
  // As kubectl, only the first condition of a gate's type counts.
  const met = gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === 'True').length;
  return `${met}/${gates.length}`;
}

/**
 * What an update may not change on a pod: the node it runs on. Binding goes through the
 * `binding` subresource, whose compare-and-swap is what keeps a pod from being bound twice.
 */
export function podUpdateProblems(existing: Pod, next: Pod): FieldProblem[] {
  if ((existing.spec.nodeName ?? '') === (next.spec.nodeName ?? '')) return [];
  return [
    { path: ['spec', 'nodeName'], reason: 'FieldValueForbidden', detail: 'field is immutable; pods are bound to a node through the pods/binding subresource' },
  ];
}

export const podKind: KindDefinition = {
  patchMeta: podPatchMeta,
  kind: 'Pod',
  group: '',
  version: 'v1',
  resource: 'pods',
  singular: 'pod',
  shortNames: ['po'],
  namespaced: true,
  schema: podSchema,
  statusSubresource: true,
  validateUpdate: (existing, next) => podUpdateProblems(existing as Pod, next as Pod),
  subresources: [
    { name: 'binding', kind: 'Binding', verbs: ['create'] },
    { name: 'eviction', group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] },
  ],
  fieldSelectors: ['spec.nodeName', 'status.phase', 'spec.restartPolicy', 'spec.schedulerName', 'status.podIP'],
  columns: [
    {
      name: 'READY',
      value: (o) => {
        const p = o as Pod;
        const ready = (p.status?.containerStatuses ?? []).filter((c) => c.ready).length;
        return `${ready}/${p.spec.containers.length}`;
      },
    },
    { name: 'STATUS', value: (o) => podDisplayStatus(o as Pod) },
    { name: 'RESTARTS', value: (o) => String((o as Pod).status?.containerStatuses?.reduce((n, c) => n + (c.restartCount ?? 0), 0) ?? 0) },
    { name: 'IP', wide: true, value: (o) => (o as Pod).status?.podIP || '<none>' },
    { name: 'NODE', wide: true, value: (o) => (o as Pod).spec.nodeName || '<none>' },
    { name: 'NOMINATED NODE', wide: true, value: (o) => (o as Pod).status?.nominatedNodeName || '<none>' },
    { name: 'READINESS GATES', wide: true, value: (o) => readinessGatesCell(o as Pod) },
  ],
};

/** The pod's Ready condition, if it has one. */
export function podReadyCondition(pod: Pod): Condition | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'Ready');
}

/** Ready=True: the pod serves (endpoints, gateways, autoscalers and ReplicaSet counts agree on this one rule). */
export function isPodReady(pod: Pod): boolean {
  return podReadyCondition(pod)?.status === 'True';
}
