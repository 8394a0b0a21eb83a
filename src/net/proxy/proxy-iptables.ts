// Applies the service proxy's rules: reads which of our chains and jumps exist (iptables-save), and runs one iptables-restore --noflush per table that changed.
import { JUMPS, restoreText, type ChainJump, type ProxyRules, type Table } from './proxy-rules.js';
import type { NetRunner } from '../net-command.js';

const OUR_PREFIX = 'MINIK8S-';
const TABLES: readonly Table[] = ['nat', 'filter'];

/** What the applier needs of one table's `iptables-save`: our chains, and the built-in chains' rules (few; ours are never held as rules). */
export interface SavedTable {
  /** Names of chains starting with MINIK8S- (the overlay's too: the renderer deletes only SVC/SEP ones). */
  chains: string[];
  /** Each built-in chain's rules in order, as `-A CHAIN ...` lines. */
  builtin: Record<string, string[]>;
}

const BUILTIN = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);

/** Parses `iptables-save -t TABLE`, keeping only our chain names and the built-in chains' rules. */
export function parseIptablesSave(text: string): SavedTable {
  const chains: string[] = [];
  const builtin: Record<string, string[]> = {};
  for (const line of text.split('\n')) {
    if (line.startsWith(`:${OUR_PREFIX}`)) {
      chains.push(line.slice(1, line.indexOf(' ') < 0 ? undefined : line.indexOf(' ')));
    } else if (line.startsWith('-A ')) {
      const chain = line.slice(3, line.indexOf(' ', 3));
      if (BUILTIN.has(chain)) {
        builtin[chain] ??= [];
        builtin[chain].push(line.trimEnd());
      }
    }
  }
  return { chains, builtin };
}

function targetOf(rule: string): string | undefined {
  return / -j (\S+)$/.exec(rule)?.[1];
}

/**
 * Our jumps must be the first rules of their built-in chains, in JUMPS' order: a rule that
 * decides before them (Docker's ACCEPT for its bridge, added when it makes a network; the
 * overlay's ACCEPT for pod traffic) would let a connection to a service without endpoints
 * through instead of refusing it. Where they are not, the lines delete the ones present (by
 * their saved text) and insert all of them at position 1; where they are, no lines.
 */
export function jumpFixLines(table: Table, saved: SavedTable, jumps: readonly ChainJump[] = JUMPS): { lines: string[]; chains: string[] } {
  const lines: string[] = [];
  const chains: string[] = [];
  const byChain = new Map<string, ChainJump[]>();
  for (const j of jumps) if (j.table === table) byChain.set(j.chain, [...(byChain.get(j.chain) ?? []), j]);
  for (const [chain, wanted] of byChain) {
    const rules = saved.builtin[chain] ?? [];
    if (wanted.every((j, i) => rules[i] !== undefined && targetOf(rules[i]!) === j.target)) continue;
    const ours = new Set(wanted.map((j) => j.target));
    for (const rule of rules) if (ours.has(targetOf(rule) ?? '')) lines.push(`-D ${rule.slice(3)}`);
    for (const j of [...wanted].reverse()) lines.push(`-I ${chain} 1 ${j.matches} -j ${j.target}`);
    chains.push(chain);
  }
  return { lines, chains };
}

/** What the applier remembers between syncs. */
export interface ProxyApplyState {
  /** Per table, each of our chains' rules as last restored (chain -> its lines); absent: the next sync is a full one. */
  applied: Partial<Record<Table, Map<string, string>>>;
  /** performance.now() of the last full sync. */
  lastFullAt?: number;
}

export interface ProxySyncOptions {
  /** A full sync (read everything, rewrite every chain) when the last one is older than this; others read only the built-in chains and write only chains that changed. */
  fullResyncMs?: number;
  /** Make this one a full sync. */
  full?: boolean;
}

/** How often a full sync reads and rewrites everything, catching a chain of ours changed by someone else. */
export const FULL_RESYNC_MS = 5 * 60_000;

export interface ProxyApplyResult {
  rules: ProxyRules;
  full: boolean;
  /** Tables restored this time (empty: everything was in place). */
  restored: Table[];
  /** Chains written, over both tables. */
  chainsWritten: number;
  /** Why each restored table was written. */
  reasons: string[];
  readMs: number;
  renderMs: number;
  restoreMs: number;
}

/** A table's rules grouped by chain, each chain's lines joined: what is compared between syncs. */
function byChain(rules: ProxyRules[Table]): Map<string, string> {
  const lines = new Map<string, string[]>(rules.chains.map((c) => [c, []]));
  for (const rule of rules.rules) lines.get(rule.slice(3, rule.indexOf(' ', 3)))?.push(rule);
  return new Map([...lines].map(([c, l]) => [c, l.join('\n')]));
}

/**
 * One sync, kube-proxy's way since it minimised its restores: a full one (first, after a failure,
 * every `fullResyncMs`) reads both tables with iptables-save, deletes stale chains of ours found
 * there and rewrites every chain; the others read only the built-in chains (our jumps; cheap),
 * take our chains to be as last written, and restore only the chains whose rules changed, with
 * stale ones deleted. A table is restored only when something differs or a jump is missing or no
 * longer first. On a failure nothing is remembered, so the next sync is a full one; our rules are
 * never flushed as a whole.
 */
export async function syncProxyIptables(
  run: NetRunner,
  render: (existing: Record<Table, string[]>) => ProxyRules,
  state: ProxyApplyState,
  options: ProxySyncOptions = {},
): Promise<ProxyApplyResult> {
  const t0 = performance.now();
  const full =
    options.full === true ||
    !state.applied.nat ||
    !state.applied.filter ||
    state.lastFullAt === undefined ||
    t0 - state.lastFullAt >= (options.fullResyncMs ?? FULL_RESYNC_MS);
  let saved: Record<Table, SavedTable>;
  if (full) {
    const [nat, filter] = await Promise.all(TABLES.map(async (table) => parseIptablesSave(await run({ tool: 'iptables-save', args: ['-t', table] }))));
    saved = { nat: nat!, filter: filter! };
  } else {
    const read = async (table: Table): Promise<SavedTable> => {
      const chains = [...new Set(JUMPS.filter((j) => j.table === table).map((j) => j.chain))];
      const listed = await Promise.all(chains.map((chain) => run({ tool: 'iptables', args: ['-w', '-t', table, '-S', chain] })));
      return parseIptablesSave(listed.join('\n'));
    };
    const [nat, filter] = await Promise.all(TABLES.map(read));
    saved = { nat: { ...nat!, chains: [...state.applied.nat!.keys()] }, filter: { ...filter!, chains: [...state.applied.filter!.keys()] } };
  }
  const t1 = performance.now();
  const rules = render({ nat: saved.nat.chains, filter: saved.filter.chains });
  const t2 = performance.now();
  const restored: Table[] = [];
  const reasons: string[] = [];
  let chainsWritten = 0;
  try {
    for (const table of TABLES) {
      const wanted = rules[table];
      const chains = byChain(wanted);
      const before = full ? undefined : state.applied[table]!;
      const changed = before ? wanted.chains.filter((c) => before.get(c) !== chains.get(c)) : wanted.chains;
      const jumps = jumpFixLines(table, saved[table]);
      const why = [
        ...(full ? ['full sync'] : changed.length ? [`${changed.length} chains changed`] : []),
        ...(jumps.chains.length ? [`jumps not first in ${jumps.chains.join(', ')}`] : []),
        ...(wanted.deleteChains.length ? [`${wanted.deleteChains.length} stale chains`] : []),
      ];
      if (!full && changed.length === 0 && jumps.lines.length === 0 && wanted.deleteChains.length === 0) continue;
      const write = new Set(changed);
      const text = restoreText(
        table,
        { chains: changed, rules: wanted.rules.filter((r) => write.has(r.slice(3, r.indexOf(' ', 3)))), deleteChains: wanted.deleteChains },
        jumps.lines,
      );
      await run({ tool: 'iptables-restore', args: ['-w', '--noflush'], input: text });
      state.applied[table] = chains;
      chainsWritten += changed.length;
      restored.push(table);
      reasons.push(`${table}: ${why.join(', ')}`);
    }
  } catch (err) {
    state.applied = {};
    throw err;
  }
  if (full) state.lastFullAt = t0;
  return { rules, full, restored, chainsWritten, reasons, readMs: t1 - t0, renderMs: t2 - t1, restoreMs: performance.now() - t2 };
}
