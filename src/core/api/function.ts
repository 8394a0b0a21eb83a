// Function (minik8s.io/v1): Python handler code, its requirements and how it scales, built into images and run behind the activator.
import * as v from 'valibot';
import { CodeError, codeFiles, codePathProblem, handlerModuleFiles } from './code-archive.js';
import type { KindDefinition } from './kind.js';
import { cronProblem } from './cron.js';
import { conditionSchema, kindSchema, type Condition } from './meta.js';
import { intSchema } from './pod.js';
import { parseQuantity, resourceListSchema } from './quantity.js';
import { duplicates, withChecks, type FieldProblem } from './validate.js';

/** Labels on a function's ReplicaSets and pods (and on its FunctionVersions). */
export const FUNCTION_LABEL = 'minik8s.io/function';
export const FUNCTION_VERSION_LABEL = 'minik8s.io/function-version';
/**
 * Set by `minik8s function create|update` on every submit: a build request. A version whose build
 * failed is built again when a newer request arrives (the same code submitted after the cause was
 * fixed, e.g. a package index made reachable), without any change to the spec.
 */
export const BUILD_REQUEST_ANNOTATION = 'minik8s.io/build-request';

/**
 * The most code a Function may carry, measured as stored (the JSON of spec.code): etcd takes
 * requests of at most 1.5 MiB, and each version keeps a copy of the code in its own object.
 */
export const MAX_CODE_BYTES = 1024 * 1024;
export const MAX_REQUIREMENTS_BYTES = 64 * 1024;
export const MAX_CODE_FILES = 1000;
export const DEFAULT_HANDLER = 'handler.handler';

export { codePathProblem, handlerModuleFiles };

const IDENT = '[A-Za-z_][A-Za-z0-9_]*';
/** `module.function`, the module possibly dotted (`pkg.mod.fn`). */
const HANDLER = new RegExp(`^${IDENT}(\\.${IDENT})*\\.${IDENT}$`);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const codeSchema = v.strictObject({
  /** Text files by relative path (a directory becomes several entries). */
  files: v.optional(v.record(v.string(), v.string())),
  /** A base64 .tar.gz or .zip of the code (binary files, or what the user already has packed). */
  archive: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.regex(BASE64, 'must be base64 (a .tar.gz or .zip)'))),
});
export type FunctionCode = v.InferOutput<typeof codeSchema>;

const envVarSchema = v.strictObject({
  name: v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    v.regex(
      /^[-._a-zA-Z][-._a-zA-Z0-9]*$/,
      "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit",
    ),
  ),
  value: v.optional(v.string(), ''),
});

const resourcesSchema = v.strictObject({
  requests: v.optional(resourceListSchema),
  limits: v.optional(resourceListSchema),
});

const scalingSchema = v.strictObject({
  /** In-flight requests per pod the autoscaler aims at (Knative's container concurrency target). */
  target: v.optional(intSchema({ min: 1, max: 1000 }), 10),
  minScale: v.optional(intSchema({ min: 0, max: 1000 }), 0),
  maxScale: v.optional(intSchema({ min: 1, max: 1000 }), 10),
  /** Seconds without a request before the function goes to zero pods. */
  idleGraceSeconds: v.optional(intSchema({ min: 0, max: 86_400 }), 30),
});
export type FunctionScaling = v.InferOutput<typeof scalingSchema>;

const triggerSchema = v.strictObject({
  // Checked as the trigger runner reads it (cron.ts): a schedule that is wrong, or can never fire, is refused when applied.
  schedule: v.pipe(
    v.string(),
    v.check(
      (s) => cronProblem(s) === undefined,
      (issue) => cronProblem(String(issue.input)) ?? 'invalid schedule',
    ),
  ),
  /** The event the function gets at each tick. */
  data: v.optional(v.unknown()),
});

/** The fields that make a version: a change to any of them makes a new one (scaling, update strategy and triggers do not). */
export const VERSION_FIELDS = ['runtime', 'handler', 'code', 'requirements', 'env', 'resources', 'timeoutSeconds'] as const;
/** The fields an image is built from: versions that agree on them share one image. */
export const BUILD_FIELDS = ['runtime', 'handler', 'code', 'requirements'] as const;

const functionSpecBase = v.strictObject({
  runtime: v.optional(v.picklist(['python3']), 'python3'),
  handler: v.optional(
    v.pipe(v.string(), v.regex(HANDLER, 'must be module.function, such as handler.handler (file handler.py, def handler(event, context))')),
    DEFAULT_HANDLER,
  ),
  code: codeSchema,
  requirements: v.optional(v.pipe(v.string(), v.maxLength(MAX_REQUIREMENTS_BYTES, `must be no more than ${MAX_REQUIREMENTS_BYTES} characters`))),
  env: v.optional(v.array(envVarSchema)),
  resources: v.optional(resourcesSchema),
  scaling: v.optional(scalingSchema, {}),
  /** Per request; the activator answers 504 past it, and pods get at least this long to drain when they stop. */
  timeoutSeconds: v.optional(intSchema({ min: 1, max: 900 }), 60),
  /** What the next version change does: Soft keeps old pods serving until the new version has a Ready pod, Hard stops them at once. */
  updateStrategy: v.optional(v.picklist(['Soft', 'Hard']), 'Soft'),
  triggers: v.optional(v.array(triggerSchema)),
});

/** Environment names the runtime sets itself: a function may not set them. */
const RESERVED_ENV = /^MINIK8S_/;

function specProblems(spec: v.InferOutput<typeof functionSpecBase>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const { files, archive } = spec.code;
  if ((files === undefined) === (archive === undefined)) {
    problems.push({
      path: ['code'],
      reason: 'FieldValueRequired',
      detail: 'must give exactly one of files (text files by path) or archive (a base64 .tar.gz or .zip)',
      value: '',
    });
  }
  if (files) {
    const names = Object.keys(files);
    if (names.length === 0)
      problems.push({ path: ['code', 'files'], reason: 'FieldValueRequired', detail: "must hold at least the handler's file", value: '' });
    if (names.length > MAX_CODE_FILES)
      problems.push({
        path: ['code', 'files'],
        reason: 'FieldValueInvalid',
        detail: `must hold at most ${MAX_CODE_FILES} files`,
        value: `${names.length} files`,
      });
    for (const name of names.slice(0, MAX_CODE_FILES)) {
      const problem = codePathProblem(name);
      if (problem) problems.push({ path: ['code', 'files', name], reason: 'FieldValueInvalid', detail: problem, value: name });
    }
    const modules = handlerModuleFiles(spec.handler);
    if (names.length > 0 && !modules.some((m) => m in files)) {
      problems.push({ path: ['handler'], reason: 'FieldValueInvalid', detail: `the code has no ${modules.join(' or ')} for this handler's module` });
    }
  }
  const stored = JSON.stringify(spec.code).length;
  if (stored > MAX_CODE_BYTES) {
    problems.push({
      path: ['code'],
      reason: 'FieldValueInvalid',
      detail: `must be no more than ${MAX_CODE_BYTES} bytes (1 MiB) as stored, is ${stored}`,
      value: `${stored} bytes`,
    });
  }
  problems.push(
    ...duplicates(
      spec.env ?? [],
      (e) => e.name,
      (i) => ['env', i, 'name'],
    ),
  );
  (spec.env ?? []).forEach((e, i) => {
    if (RESERVED_ENV.test(e.name))
      problems.push({ path: ['env', i, 'name'], reason: 'FieldValueInvalid', detail: 'names starting with MINIK8S_ are set by the function runtime' });
  });
  for (const [name, q] of Object.entries(spec.resources?.requests ?? {})) {
    const limit = spec.resources?.limits?.[name];
    if (limit !== undefined && parseQuantity(q) > parseQuantity(limit)) {
      problems.push({
        path: ['resources', 'requests', name],
        reason: 'FieldValueInvalid',
        detail: `must be less than or equal to ${name} limit of ${String(limit)}`,
      });
    }
  }
  if (spec.scaling.minScale > spec.scaling.maxScale) {
    problems.push({ path: ['scaling', 'minScale'], reason: 'FieldValueInvalid', detail: `must be less than or equal to maxScale (${spec.scaling.maxScale})` });
  }
  return problems;
}

export const functionSpecSchema = withChecks(functionSpecBase, specProblems);
export type FunctionSpec = v.InferOutput<typeof functionSpecSchema>;

const buildStatusSchema = v.strictObject({
  /** The version being built (or last built) for the current spec. */
  version: intSchema({ min: 1 }),
  phase: v.picklist(['Building', 'Succeeded', 'Failed']),
  /** `3/7 RUN python3 -m pip install ...`: where the build is. */
  step: v.optional(v.string()),
  message: v.optional(v.string()),
  /** The build request (annotation) this status answers, so a client knows its own request was seen. */
  request: v.optional(v.string()),
});
export type FunctionBuildStatus = v.InferOutput<typeof buildStatusSchema>;

export const functionStatusSchema = v.strictObject({
  observedGeneration: v.optional(v.pipe(v.number(), v.integer())),
  /** The version now serving, or being rolled to. */
  version: v.optional(intSchema({ min: 1 })),
  /** The image the current version's pods run (`functions/NS-NAME@sha256:...`, resolved against the master's registry). */
  image: v.optional(v.string()),
  /** The HTTP trigger: `https://MASTER:8090/function/NAME` (http under the master's --insecure-http). */
  url: v.optional(v.string()),
  /** Desired and Ready pods of the current version. */
  replicas: v.optional(intSchema({ min: 0 })),
  readyReplicas: v.optional(intSchema({ min: 0 })),
  conditions: v.optional(v.array(conditionSchema)),
  build: v.optional(buildStatusSchema),
});
export type FunctionStatus = v.InferOutput<typeof functionStatusSchema>;

export const functionSchema = kindSchema('minik8s.io/v1', 'Function', {
  spec: functionSpecSchema,
  status: v.optional(functionStatusSchema, {}),
});
export type FunctionObject = v.InferOutput<typeof functionSchema>;

function condition(fn: FunctionObject, type: string): Condition | undefined {
  return fn.status?.conditions?.find((c) => c.type === type);
}

/** `1/1`, `0/0`: Ready pods of the current version over its desired ones. */
export function functionReady(fn: FunctionObject): string {
  return `${fn.status?.readyReplicas ?? 0}/${fn.status?.replicas ?? 0}`;
}

export const functionKind: KindDefinition = {
  kind: 'Function',
  group: 'minik8s.io',
  version: 'v1',
  resource: 'functions',
  singular: 'function',
  shortNames: ['fn'],
  namespaced: true,
  schema: functionSchema,
  statusSubresource: true,
  // The archive is unpacked here with the very check the image build runs, so a damaged one, an
  // entry outside the function's directory, a link or a zip bomb is a 422 at apply, not a failed build later.
  async admit(obj) {
    const spec = (obj as FunctionObject).spec;
    try {
      await codeFiles(spec.code, spec.handler);
      return [];
    } catch (err) {
      if (!(err instanceof CodeError)) throw err;
      const path = spec.code.archive !== undefined ? ['spec', 'code', 'archive'] : ['spec', 'code'];
      const value = spec.code.archive !== undefined ? `${Buffer.byteLength(spec.code.archive, 'base64')} bytes` : '';
      return [{ path, reason: 'FieldValueInvalid', value, detail: err.message }];
    }
  },
  columns: [
    { name: 'VERSION', value: (o) => String((o as FunctionObject).status?.version ?? '<none>') },
    { name: 'URL', value: (o) => (o as FunctionObject).status?.url ?? '<none>' },
    { name: 'READY', value: (o) => functionReady(o as FunctionObject) },
    {
      name: 'BUILD',
      wide: true,
      value: (o) => {
        const b = (o as FunctionObject).status?.build;
        return b ? `v${b.version} ${b.phase}` : '<none>';
      },
    },
    {
      name: 'STATUS',
      wide: true,
      value: (o) => {
        const ready = condition(o as FunctionObject, 'Ready');
        return ready ? (ready.status === 'True' ? (ready.reason ?? 'Ready') : `${ready.reason ?? 'NotReady'}`) : '<unknown>';
      },
    },
  ],
};
