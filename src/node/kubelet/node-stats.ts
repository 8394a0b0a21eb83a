// Whole-machine CPU and memory use from /proc (stat deltas and meminfo), for the kubelet's Summary API.
import { readFile } from 'node:fs/promises';

export interface CpuTimes {
  /** Jiffies spent doing anything but idling. */
  busy: number;
  total: number;
}

export interface NodeUsage {
  cpuCores: number;
  memoryBytes: number;
}

/** The aggregate `cpu` line of /proc/stat; iowait counts as idle, as top and the kubelet's cAdvisor do. */
export function parseProcStat(text: string): CpuTimes {
  const line = text.split('\n').find((l) => /^cpu\s/.test(l));
  if (!line) throw new Error('/proc/stat has no aggregate cpu line');
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user/nice).
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

/** Working set as `free` shows "used": MemTotal minus MemAvailable, in bytes. */
export function parseMemInfo(text: string): number {
  const kib = (key: string): number | undefined => {
    const m = new RegExp(`^${key}:\\s+(\\d+)\\s*kB`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const total = kib('MemTotal');
  if (total === undefined) throw new Error('/proc/meminfo has no MemTotal');
  const available = kib('MemAvailable') ?? (kib('MemFree') ?? 0) + (kib('Buffers') ?? 0) + (kib('Cached') ?? 0);
  return Math.max(0, total - available) * 1024;
}

/** Cores in use between two samples: the busy share of elapsed jiffies times the machine's cores. */
export function cpuCoresBetween(before: CpuTimes, after: CpuTimes, cores: number): number {
  const total = after.total - before.total;
  if (total <= 0) return 0;
  return Math.max(0, ((after.busy - before.busy) / total) * cores);
}

export interface ProcNodeStatsOptions {
  /** Logical CPUs of the machine. */
  cores: number;
  procRoot?: string;
}

/**
 * Returns a sampler: each call measures CPU since the previous call (the first call since
 * start of the sampler, which it takes at once), so a caller polling every few seconds gets
 * the average over its own interval, as the kubelet's usageNanoCores is.
 */
export function procNodeStats(options: ProcNodeStatsOptions): () => Promise<NodeUsage> {
  const root = options.procRoot ?? '/proc';
  const readCpu = async () => parseProcStat(await readFile(`${root}/stat`, 'utf8'));
  // A first read that fails counts from boot rather than rejecting with nobody listening.
  let last: Promise<CpuTimes> = readCpu().catch(() => ({ busy: 0, total: 0 }));
  return async () => {
    const before = await last;
    const now = readCpu();
    // A failed read must not poison every later call.
    last = now.catch(() => before);
    const [after, memText] = await Promise.all([now, readFile(`${root}/meminfo`, 'utf8')]);
    return { cpuCores: cpuCoresBetween(before, after, options.cores), memoryBytes: parseMemInfo(memText) };
  };
}
