// GpuJob (minik8s.io/v1): a program (a .cu file or a directory with a Makefile) and the Slurm parameters to run it with on a SlurmCluster; its status follows the Slurm job.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { kindSchema, labelName, timestampSchema } from './meta.js';
import { intSchema } from './pod.js';
import { withChecks, type FieldProblem } from './validate.js';

/** What a job may carry: the API takes objects of a few MiB, and programs are sources, not data sets. */
export const MAX_PROGRAM_BYTES = 1024 * 1024;
export const MAX_PROGRAM_FILES = 500;

/** A relative path of plain segments (no `.`, `..`, empty or absolute ones): files are written under the job directory by it. */
const PROGRAM_PATH = /^[A-Za-z0-9_+@=,-][A-Za-z0-9._+@=,-]*(\/[A-Za-z0-9_+@=,-][A-Za-z0-9._+@=,-]*)*$/;
const programPathSchema = v.pipe(
  v.string(),
  v.maxLength(255, 'must be no more than 255 characters'),
  v.regex(PROGRAM_PATH, "must be a relative path of letters, digits and '._+@=,-' (no '.', '..' or empty parts, not starting with '.')"),
);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Record keys checked one by one with a clear message (valibot's record would say only "Invalid key"). */
function fileMapSchema(value: v.GenericSchema<string, string>) {
  return v.pipe(
    v.custom<Record<string, unknown>>(
      (x) => typeof x === 'object' && x !== null && !Array.isArray(x),
      'Invalid type: expected a map of file paths to contents',
    ),
    v.record(v.string(), value),
    v.rawCheck<Record<string, string>>(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      for (const key of Object.keys(dataset.value)) {
        const result = v.safeParse(programPathSchema, key);
        if (!result.success) addIssue({ message: `file name ${JSON.stringify(key)}: ${result.issues[0].message}`, input: key });
      }
    }),
  );
}

const programSchema = v.strictObject({
  /**
   * Only in manifests: a .cu/.c file or a directory, relative to the manifest. `minik8s apply`
   * reads it and sends `files` instead; the API server cannot read the user's disk.
   */
  path: v.optional(v.string()),
  /** Text files by relative path: sources, Makefile, inputs. */
  files: v.optional(fileMapSchema(v.string())),
  /** Files that are not UTF-8 text, base64 encoded. */
  binaryFiles: v.optional(fileMapSchema(v.pipe(v.string(), v.regex(BASE64, 'must be base64 (standard alphabet, padded)')))),
});

const NO_NEWLINE = /^[^\n\r]*$/;
const slurmSchema = v.strictObject({
  partition: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.,-]+$/, "must be a partition name (letters, digits, '_.,-')"))),
  nodes: v.optional(intSchema({ min: 1 })),
  ntasks: v.optional(intSchema({ min: 1 })),
  ntasksPerNode: v.optional(intSchema({ min: 1 })),
  cpusPerTask: v.optional(intSchema({ min: 1 })),
  /** `--gpus`: a count, or TYPE:COUNT. */
  gpus: v.optional(
    v.union([intSchema({ min: 1 }), v.pipe(v.string(), v.regex(/^([A-Za-z0-9_.-]+:)?[1-9]\d*$/, 'must be COUNT or TYPE:COUNT, e.g. 1 or a100:2'))]),
  ),
  /** `--gres`, e.g. gpu:1 or gpu:a100:2. */
  gres: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:,-]+$/, 'must be a generic resource list such as gpu:1'))),
  /** `--mem`: MB, or with a unit K, M, G or T. */
  mem: v.optional(v.pipe(v.string(), v.regex(/^[1-9]\d*[KMGT]?$/, 'must be a size such as 512M or 4G'))),
  /** `--time`: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS. */
  time: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^(\d+-\d+(:\d+){0,2}|\d+(:\d+){0,2}|UNLIMITED|INFINITE)$/, 'must be a Slurm time limit such as 10, 30:00, 2:00:00 or 1-12:00:00'),
    ),
  ),
  /** More `#SBATCH` directives, each one option as sbatch takes it, e.g. `--exclusive` or `--qos=high`. */
  extra: v.optional(
    v.array(v.pipe(v.string(), v.regex(/^--?[A-Za-z]/, 'must be an sbatch option such as --exclusive'), v.regex(NO_NEWLINE, 'must be one line'))),
  ),
});
export type GpuJobSlurm = v.InferOutput<typeof slurmSchema>;

const gpuJobSpecSchema = withChecks(
  v.strictObject({
    /** The SlurmCluster (same namespace) to submit to. */
    cluster: labelName,
    program: programSchema,
    /** The batch script's commands after the #SBATCH lines; by default `make` (and `make run` when the Makefile has it), or nvcc/cc and the binary for one source file. */
    script: v.optional(v.string()),
    slurm: v.optional(slurmSchema, {}),
    /** Keep the job directory on the cluster after the results are fetched (default: removed). */
    keepJobDirectory: v.optional(v.boolean()),
  }),
  (s): FieldProblem[] => {
    const problems: FieldProblem[] = [];
    const files = s.program.files ?? {};
    const binary = s.program.binaryFiles ?? {};
    if (s.program.path !== undefined) {
      problems.push({
        path: ['program', 'path'],
        reason: 'FieldValueForbidden',
        detail: 'is read by minik8s apply, which sends the files in program.files: apply the manifest with minik8s apply -f',
      });
      return problems;
    }
    const names = [...Object.keys(files), ...Object.keys(binary)];
    if (names.length === 0)
      problems.push({
        path: ['program', 'files'],
        reason: 'FieldValueRequired',
        detail: 'the job has no program: give program.path in the manifest, or program.files',
      });
    if (names.length > MAX_PROGRAM_FILES)
      problems.push({
        path: ['program', 'files'],
        reason: 'FieldValueInvalid',
        value: `${names.length} files`,
        detail: `must have at most ${MAX_PROGRAM_FILES} files`,
      });
    // A file that is also another file's directory cannot be written: refused here, not when the submitter stages the files.
    const all = new Set(names);
    for (const name of names) {
      for (let i = name.indexOf('/'); i > 0; i = name.indexOf('/', i + 1)) {
        const dir = name.slice(0, i);
        if (!all.has(dir)) continue;
        const field = Object.hasOwn(files, dir) ? 'files' : 'binaryFiles';
        problems.push({
          path: ['program', field, dir],
          reason: 'FieldValueInvalid',
          value: dir,
          detail: `is a file, but ${JSON.stringify(name)} needs it to be a directory`,
        });
        all.delete(dir);
      }
    }
    for (const name of Object.keys(binary)) {
      if (Object.hasOwn(files, name))
        problems.push({ path: ['program', 'binaryFiles', name], reason: 'FieldValueDuplicate', value: name, detail: 'is also in program.files' });
    }
    const bytes =
      Object.values(files).reduce((n, t) => n + Buffer.byteLength(t), 0) + Object.values(binary).reduce((n, b) => n + Buffer.byteLength(b, 'base64'), 0);
    if (bytes > MAX_PROGRAM_BYTES)
      problems.push({
        path: ['program'],
        reason: 'FieldValueInvalid',
        value: `${bytes} bytes`,
        detail: `Too long: the program must have at most ${MAX_PROGRAM_BYTES} bytes (put data sets on the cluster's storage)`,
      });
    if (names.length && s.script === undefined && defaultScript(names, files) === undefined) {
      problems.push({
        path: ['script'],
        reason: 'FieldValueRequired',
        detail: 'the program has no Makefile and not exactly one .cu or .c file: say what the batch script runs',
      });
    }
    return problems;
  },
);
export type GpuJobSpec = v.InferOutput<typeof gpuJobSpecSchema>;

export const GPUJOB_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'] as const;
export type GpuJobPhase = (typeof GPUJOB_PHASES)[number];

const gpuJobStatusSchema = v.strictObject({
  // Written by the GpuJob controller.
  phase: v.optional(v.picklist(GPUJOB_PHASES)),
  reason: v.optional(v.string()),
  message: v.optional(v.string()),
  /** Submitter pods made so far (a new one resumes the Slurm job the last one submitted). */
  attempts: v.optional(intSchema({ min: 0 })),
  podName: v.optional(v.string()),
  // Written by the submitter, from Slurm.
  jobId: v.optional(v.string()),
  jobName: v.optional(v.string()),
  jobDirectory: v.optional(v.string()),
  /** Slurm's JobState: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...; SUBMIT_FAILED when sbatch refused the job, LOST when Slurm forgot it. */
  slurmState: v.optional(v.string()),
  /** Slurm's Reason (why pending, why failed) or sbatch's error. */
  slurmReason: v.optional(v.string()),
  node: v.optional(v.string()),
  submitTime: v.optional(timestampSchema),
  startTime: v.optional(timestampSchema),
  completionTime: v.optional(timestampSchema),
  exitCode: v.optional(v.pipe(v.number(), v.integer())),
  /** The signal that ended the job's script, when one did. */
  signal: v.optional(v.pipe(v.number(), v.integer())),
  /** The end of result.out and error.err (the whole files: `minik8s gpujob output`). */
  output: v.optional(v.string()),
  error: v.optional(v.string()),
  outputBytes: v.optional(intSchema({ min: 0 })),
  errorBytes: v.optional(intSchema({ min: 0 })),
  /** True once result.out and error.err of a finished job are with the master. */
  resultsCollected: v.optional(v.boolean()),
  /** False while the submitter cannot reach the cluster (the phase is then Unknown). */
  clusterReachable: v.optional(v.boolean()),
  clusterMessage: v.optional(v.string()),
  /** What stopped the last submitter (it could not stage the files, read the key, ...), for the job's message. */
  submitterError: v.optional(v.string()),
  lastReportTime: v.optional(timestampSchema),
});
export type GpuJobStatus = v.InferOutput<typeof gpuJobStatusSchema>;

export const gpuJobSchema = kindSchema('minik8s.io/v1', 'GpuJob', {
  spec: gpuJobSpecSchema,
  status: v.optional(gpuJobStatusSchema, {}),
});
export type GpuJob = v.InferOutput<typeof gpuJobSchema>;

/** The commands a program runs by default: its Makefile's, or one source file compiled and run. Undefined: it must say. */
export function defaultScript(names: readonly string[], files: Readonly<Record<string, string>>): string | undefined {
  const makefile = ['GNUmakefile', 'makefile', 'Makefile'].find((n) => names.includes(n));
  if (makefile) {
    // `make run` only when the Makefile has that target: `make` alone is how a build-only Makefile is used.
    return /^run\s*:/m.test(files[makefile] ?? '') ? 'make\nmake run' : 'make';
  }
  const sources = names.filter((n) => !n.includes('/') && /\.(cu|c)$/.test(n));
  if (sources.length !== 1) return undefined;
  const source = sources[0]!;
  const binary = source.replace(/\.(cu|c)$/, '') || 'program';
  return source.endsWith('.cu') ? `nvcc -O2 -o ${binary} ${source}\n./${binary}` : `cc -O2 -o ${binary} ${source}\n./${binary}`;
}

/** The script the job runs: its own, or the default. */
export function jobScript(spec: GpuJobSpec): string {
  if (spec.script !== undefined) return spec.script;
  const files = spec.program.files ?? {};
  return defaultScript([...Object.keys(files), ...Object.keys(spec.program.binaryFiles ?? {})], files) ?? '';
}

export function isFinalPhase(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

export const gpuJobKind: KindDefinition = {
  kind: 'GpuJob',
  group: 'minik8s.io',
  version: 'v1',
  resource: 'gpujobs',
  singular: 'gpujob',
  shortNames: ['gj'],
  namespaced: true,
  schema: gpuJobSchema,
  statusSubresource: true,
  // Served by src/control-plane/api-server/gpujob-routes.ts: what a submitter needs, and the job's result.out and error.err.
  subresources: [
    { name: 'submission', kind: 'GpuJobSubmission', verbs: ['get'] },
    { name: 'output', kind: 'GpuJobOutput', verbs: ['get', 'update'] },
  ],
  // Like a Job's pod template: what was submitted is what runs. Change it by deleting and applying again.
  validateUpdate(existing, next) {
    return JSON.stringify((existing as GpuJob).spec) === JSON.stringify((next as GpuJob).spec)
      ? []
      : [
          {
            path: ['spec'],
            reason: 'FieldValueForbidden',
            value: '',
            detail: 'field is immutable: a GpuJob runs what it was created with; delete it and apply it again',
          },
        ];
  },
  columns: [
    { name: 'PHASE', value: (o) => ((o as GpuJob).metadata.deletionTimestamp ? 'Terminating' : ((o as GpuJob).status?.phase ?? 'Pending')) },
    { name: 'SLURM-ID', value: (o) => (o as GpuJob).status?.jobId ?? '<none>' },
    { name: 'NODE', value: (o) => (o as GpuJob).status?.node || '<none>' },
    { name: 'CLUSTER', wide: true, value: (o) => (o as GpuJob).spec.cluster },
    {
      name: 'EXIT',
      wide: true,
      value: (o) => {
        const c = (o as GpuJob).status?.exitCode;
        return c === undefined ? '<none>' : String(c);
      },
    },
  ],
};
