// `minik8s events`: kubectl events' table of what happened in a namespace (or everywhere, or to one object), oldest first; `-w` goes on printing new ones.
import { eventKind, type Event } from '../core/api/event.js';
import { ageSince } from '../core/api/table.js';
import { GoneError } from '../core/errors.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { alignColumns, asList, columnWidths, formatRow, printJson, printYaml, withTypeMeta } from './printers.js';
import { resolveKind } from './resolve-kind.js';

export interface EventsArgs {
  allNamespaces?: boolean;
  /** `--for TYPE/NAME`: only the events about that object. */
  for?: string;
  /** `--types Warning,Normal`. */
  types?: string[];
  output?: string;
  noHeaders?: boolean;
  /** `-w`: print the events there are, then each new or changed one as it comes, until interrupted. */
  watch?: boolean;
}

/** When an event last happened: its series' last sighting, else lastTimestamp, else eventTime (kubectl's order). */
function lastSeen(e: Event): string {
  return String(e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp ?? '');
}

/** kubectl events' LAST SEEN cell: `5m`, or `30s (x3 over 5m)` for a repeated event. */
export function eventInterval(e: Event, now: Date): string {
  const first = ageSince(e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp, now);
  if (e.series) return `${ageSince(e.series.lastObservedTime, now)} (x${e.series.count ?? 0} over ${first})`;
  if ((e.count ?? 0) > 1) return `${ageSince(e.lastTimestamp, now)} (x${e.count} over ${first})`;
  return first;
}

/** `--types`: each Normal or Warning, any case, as kubectl checks them. */
export function parseTypes(values: readonly string[]): string[] {
  const types = values.flatMap((v) => v.split(',')).filter(Boolean);
  for (const t of types) if (!/^(normal|warning)$/i.test(t)) throw new CliError('valid --types are Normal or Warning');
  return types.map((t) => t.toLowerCase());
}

/** `--for TYPE/NAME` as the involved object's kind and name. */
export function parseFor(value: string): { kind: string; name: string } {
  const slash = value.indexOf('/');
  if (slash <= 0 || slash === value.length - 1) throw new CliError(`--for must be in resource/name form`);
  return { kind: resolveKind(value.slice(0, slash)).kind, name: value.slice(slash + 1) };
}

function eventsHeader(allNamespaces?: boolean): string[] {
  return [...(allNamespaces ? ['NAMESPACE'] : []), 'LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'];
}

function eventRow(e: Event, now: Date, allNamespaces?: boolean): string[] {
  return [
    ...(allNamespaces ? [e.metadata?.namespace ?? ''] : []),
    eventInterval(e, now),
    e.type ?? 'Normal',
    e.reason ?? '',
    `${e.involvedObject.kind ?? ''}/${e.involvedObject.name ?? ''}`,
    String(e.message ?? '').trim(),
  ];
}

/** The table kubectl events prints, rows oldest first. */
export function formatEvents(events: readonly Event[], options: { now: Date; allNamespaces?: boolean; noHeaders?: boolean }): string {
  const rows = sortEvents(events).map((e) => eventRow(e, options.now, options.allNamespaces));
  return alignColumns(options.noHeaders ? rows : [eventsHeader(options.allNamespaces), ...rows]);
}

/** Oldest first by when each was last seen; the sort is stable, so equal times keep the server's order. */
export function sortEvents(events: readonly Event[]): Event[] {
  return [...events].sort((a, b) => lastSeen(a).localeCompare(lastSeen(b)));
}

export async function runEvents(ctx: CliContext, args: EventsArgs): Promise<number> {
  if (args.output !== undefined && !['json', 'yaml'].includes(args.output))
    throw new CliError(`unable to match a printer suitable for the output format "${args.output}", allowed formats are: json,yaml`);
  const types = parseTypes(args.types ?? []);
  const target = args.for ? parseFor(args.for) : undefined;
  const fieldSelector = target ? `involvedObject.kind=${target.kind},involvedObject.name=${target.name}` : undefined;
  const namespace = args.allNamespaces ? undefined : ctx.namespace;
  // Filtered here as well: the selector narrows the transfer, this keeps the answer right on any server.
  const wanted = (e: Event) =>
    (!target || (e.involvedObject.kind === target.kind && e.involvedObject.name === target.name)) &&
    (!types.length || types.includes(String(e.type ?? 'Normal').toLowerCase()));
  const list = await ctx.client().list(eventKind, { namespace, fieldSelector });
  const events = (list.items as Event[]).filter(wanted);
  if (args.watch) {
    await watchEvents(ctx, args, { events, resourceVersion: list.metadata.resourceVersion, namespace, fieldSelector, wanted });
    return 0;
  }
  if (args.output) {
    const items = sortEvents(events).map((e) => withTypeMeta(eventKind, e));
    ctx.out(args.output === 'json' ? printJson(asList(items)) : await printYaml(asList(items)));
    return 0;
  }
  if (events.length === 0) {
    ctx.err(args.allNamespaces ? 'No events found.\n' : `No events found in ${ctx.namespace} namespace.\n`);
    return 0;
  }
  ctx.out(formatEvents(events, { now: ctx.now(), allNamespaces: args.allNamespaces, noHeaders: args.noHeaders }));
  return 0;
}

interface WatchStart {
  events: Event[];
  resourceVersion?: string;
  namespace?: string;
  fieldSelector?: string;
  wanted: (e: Event) => boolean;
}

/**
 * kubectl events -w: the current events oldest first, then every added or updated one (a
 * repeat bumps its count) as it arrives; deletions (events expire) print nothing. The header
 * comes once, with the first row; later rows keep the first rows' columns unless wider.
 */
async function watchEvents(ctx: CliContext, args: EventsArgs, start: WatchStart): Promise<void> {
  let widths: number[] | undefined;
  const print = async (e: Event) => {
    if (args.output === 'json') ctx.out(printJson(withTypeMeta(eventKind, e)));
    else if (args.output === 'yaml') ctx.out(`---\n${await printYaml(withTypeMeta(eventKind, e))}`);
    else ctx.out(formatRow(eventRow(e, ctx.now(), args.allNamespaces), widths!));
  };
  const first = sortEvents(start.events);
  if (!args.output) {
    const header = eventsHeader(args.allNamespaces);
    const rows = first.map((e) => eventRow(e, ctx.now(), args.allNamespaces));
    widths = columnWidths([header, ...rows]);
    if (!args.noHeaders) ctx.out(formatRow(header, widths));
  }
  for (const e of first) await print(e);
  let resourceVersion = start.resourceVersion;
  const client = ctx.client();
  while (!ctx.signal?.aborted) {
    try {
      if (resourceVersion === undefined)
        resourceVersion = (await client.list(eventKind, { namespace: start.namespace, fieldSelector: start.fieldSelector })).metadata.resourceVersion;
      for await (const event of client.watch(eventKind, {
        namespace: start.namespace,
        fieldSelector: start.fieldSelector,
        resourceVersion,
        signal: ctx.signal,
      })) {
        resourceVersion = event.object?.metadata?.resourceVersion ?? resourceVersion;
        if (event.type === 'BOOKMARK' || event.type === 'DELETED') continue;
        const e = event.object as unknown as Event;
        if (start.wanted(e)) await print(e);
      }
    } catch (err) {
      if (ctx.signal?.aborted) return;
      // Our revision was compacted away: go on from a fresh list's; what happened in between is not replayed.
      if (err instanceof GoneError) {
        resourceVersion = undefined;
        continue;
      }
      throw err;
    }
  }
}
