// `minik8s describe function NAME`: code, settings, the serving version, the build, conditions and the kept versions (not the code itself).
import type { FunctionObject } from '../core/api/function.js';
import type { FunctionVersion } from '../core/api/function-version.js';
import type { DescribeWriter } from './describe-writer.js';
import { alignColumns, ageSince } from './printers.js';

function codeSummary(fn: FunctionObject): string {
  const { files, archive } = fn.spec.code;
  if (files) {
    const names = Object.keys(files).sort();
    const bytes = names.reduce((n, k) => n + Buffer.byteLength(files[k]!), 0);
    const listed = names.slice(0, 5).join(', ') + (names.length > 5 ? `, ... (${names.length - 5} more)` : '');
    return `${names.length} file${names.length === 1 ? '' : 's'} (${listed}), ${bytes} bytes`;
  }
  return `an archive of ${Math.floor(((archive ?? '').length * 3) / 4)} bytes`;
}

/** The function's own lines, between describe's metadata and its Events. */
export function describeFunction(w: DescribeWriter, fn: FunctionObject, versions: readonly FunctionVersion[], now: Date): void {
  const s = fn.spec;
  const status = fn.status ?? {};
  w.field(0, 'Runtime', s.runtime);
  w.field(0, 'Handler', s.handler);
  w.field(0, 'Code', codeSummary(fn));
  const requirements = (s.requirements ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  w.field(0, 'Requirements', requirements.length ? requirements : '<none>');
  w.field(
    0,
    'Environment',
    (s.env ?? []).map((e) => `${e.name}=${e.value}`),
  );
  const limits = s.resources?.limits
    ? Object.entries(s.resources.limits)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(',')
    : '';
  if (limits) w.field(0, 'Limits', limits);
  w.field(
    0,
    'Scaling',
    `${s.scaling.minScale} to ${s.scaling.maxScale} pods, target ${s.scaling.target} requests in flight per pod, to zero after ${s.scaling.idleGraceSeconds}s idle`,
  );
  w.field(0, 'Timeout', `${s.timeoutSeconds}s`);
  w.field(0, 'Update Strategy', s.updateStrategy);
  if (s.triggers?.length)
    w.field(
      0,
      'Triggers',
      s.triggers.map((t) => `schedule "${t.schedule}"${t.data !== undefined ? ` data ${JSON.stringify(t.data)}` : ''}`),
    );
  w.field(0, 'URL', status.url);
  w.field(0, 'Version', status.version === undefined ? '<none>' : String(status.version));
  w.field(0, 'Image', status.image);
  w.field(0, 'Pods', `${status.readyReplicas ?? 0} ready of ${status.replicas ?? 0} desired`);
  const b = status.build;
  if (b) {
    w.section(0, 'Build');
    w.field(1, 'Version', String(b.version));
    w.field(1, 'Phase', b.phase);
    if (b.step) w.field(1, 'Step', b.step);
    if (b.message) w.field(1, 'Message', b.message.split('\n'));
  }
  const conditions = status.conditions ?? [];
  if (conditions.length) {
    w.section(0, 'Conditions');
    w.raw(
      1,
      alignColumns([['Type', 'Status', 'Reason', 'Message'], ...conditions.map((c) => [c.type, c.status, c.reason ?? '', (c.message ?? '').split('\n')[0]!])]),
    );
  }
  if (versions.length) {
    w.section(0, 'Versions');
    const rows = [...versions]
      .sort((a, b2) => a.spec.version - b2.spec.version)
      .map((v) => [
        `${v.spec.version}${v.spec.version === status.version ? ' *' : ''}`,
        v.status?.phase ?? '<none>',
        v.status?.tag ?? '<none>',
        ageSince(v.metadata.creationTimestamp ?? undefined, now),
        v.status?.reusedFrom ? `image of version ${v.status.reusedFrom}` : (v.status?.message ?? '').split('\n')[0]!,
      ]);
    w.raw(1, alignColumns([['Version', 'Phase', 'Image', 'Age', 'Note'], ...rows]));
  }
}
