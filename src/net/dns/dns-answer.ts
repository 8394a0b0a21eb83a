// Pure DNS message handling: a decoded query and the zone in, the response (or "forward it") out; UDP size limits.
import {
  AUTHORITATIVE_ANSWER,
  encode,
  RECURSION_AVAILABLE,
  RECURSION_DESIRED,
  TRUNCATED_RESPONSE,
  type Answer,
  type DecodedPacket,
  type Packet,
  type Question,
} from 'dns-packet';
import { lookupName, normalizeName, type ClusterZone } from './cluster-zone.js';

/** Services change: clients may keep an answer this long (CoreDNS's kubernetes plugin uses 5 s too). */
export const DEFAULT_TTL_SECONDS = 5;
/** RFC 1035's UDP limit for clients that do not announce a larger one with EDNS. */
export const CLASSIC_UDP_SIZE = 512;
/** What we announce and accept at most over UDP with EDNS (the DNS flag day's figure, safe from fragmentation). */
export const EDNS_UDP_SIZE = 1232;

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

export type QueryOutcome =
  | { type: 'answer'; response: Packet }
  /** Not one of our names: send the query as it came to the upstream resolvers. */
  | { type: 'forward' }
  /** Not a query at all (a response, or garbage): say nothing. */
  | { type: 'drop' };

/** The rcode of a decoded message (its low four flag bits). */
export function rcodeOf(packet: Pick<Packet, 'flags'>): number {
  return (packet.flags ?? 0) & 0xf;
}

function opcodeOf(packet: Pick<Packet, 'flags'>): number {
  return ((packet.flags ?? 0) >> 11) & 0xf;
}

function ednsOf(query: Packet): Answer | undefined {
  return query.additionals?.find((a) => a.type === 'OPT');
}

/** A response header for `query`: its id and question, RD copied, RA set, and our EDNS record if it sent one. */
function responseTo(query: Packet, rcode: number, options: { authoritative?: boolean } = {}): Packet {
  const flags = ((query.flags ?? 0) & RECURSION_DESIRED) | RECURSION_AVAILABLE | (options.authoritative ? AUTHORITATIVE_ANSWER : 0) | rcode;
  const response: Packet = { type: 'response', id: query.id ?? 0, flags, questions: query.questions ?? [], answers: [], authorities: [], additionals: [] };
  if (ednsOf(query)) {
    response.additionals = [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_UDP_SIZE, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }];
  }
  return response;
}

/** An error answer (SERVFAIL when forwarding fails, FORMERR, NOTIMP) to `query`. */
export function errorResponse(query: Packet, rcode: number): Packet {
  return responseTo(query, rcode);
}

/** The zone's SOA, in the authority section of negative answers; its minimum is how long resolvers may cache the "no". */
export function soaRecord(zone: string, ttl: number): Answer {
  return {
    type: 'SOA',
    name: zone,
    ttl,
    class: 'IN',
    data: { mname: `ns.dns.${zone}`, rname: `hostmaster.${zone}`, serial: 1, refresh: 7200, retry: 1800, expire: 86400, minimum: ttl },
  };
}

export interface AnswerOptions {
  ttlSeconds?: number;
}

/** Answers a decoded query from the zone, or says to forward it. */
export function answerQuery(query: DecodedPacket, zone: ClusterZone, options: AnswerOptions = {}): QueryOutcome {
  const ttl = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  if (query.type !== 'query') return { type: 'drop' };
  if (opcodeOf(query) !== 0) return { type: 'answer', response: responseTo(query, RCODE.NOTIMP) };
  const questions = query.questions ?? [];
  // Every real resolver sends exactly one question; more is undefined behaviour we refuse.
  if (questions.length !== 1) return { type: 'answer', response: responseTo(query, RCODE.FORMERR) };
  const question: Question = questions[0]!;
  const klass = question.class ?? 'IN';
  const found = lookupName(zone, question.name);
  if (found.kind === 'forward') return { type: 'forward' };
  if (found.kind === 'unavailable') return { type: 'answer', response: responseTo(query, RCODE.SERVFAIL) };
  if (klass !== 'IN' && klass !== 'ANY') return { type: 'answer', response: responseTo(query, RCODE.NOTIMP) };
  if (found.kind === 'nxdomain') {
    const response = responseTo(query, RCODE.NXDOMAIN, { authoritative: true });
    response.authorities = [soaRecord(found.zone, ttl)];
    return { type: 'answer', response };
  }
  const response = responseTo(query, RCODE.NOERROR, { authoritative: true });
  const wantsA = question.type === 'A' || (question.type as string) === 'ANY';
  if (wantsA && found.addresses.length) {
    // The question's own spelling goes back: some resolvers compare it byte for byte.
    response.answers = found.addresses.map((ip): Answer => ({ type: 'A', name: question.name, ttl, class: 'IN', data: ip }));
  } else if (question.type === 'SOA' && found.zone === normalizeName(question.name)) {
    response.answers = [soaRecord(found.zone, ttl)];
  } else {
    // AAAA, TXT, ... for a name that exists: NOERROR with no answers (NODATA), so clients do not conclude the name is gone.
    response.authorities = [soaRecord(found.zone, ttl)];
  }
  return { type: 'answer', response };
}

/** The UDP payload a client accepts: its EDNS figure (capped at ours), else 512. */
export function udpLimitFor(query: Packet): number {
  const opt = ednsOf(query) as { udpPayloadSize?: number } | undefined;
  if (!opt?.udpPayloadSize) return CLASSIC_UDP_SIZE;
  return Math.max(CLASSIC_UDP_SIZE, Math.min(opt.udpPayloadSize, EDNS_UDP_SIZE));
}

/** Encodes for UDP: when the whole answer does not fit, the header and question with TC set, so the client retries over TCP. */
export function encodeForUdp(response: Packet, limit: number): Buffer {
  const full = encode(response);
  if (full.length <= limit) return full;
  return encode({ ...response, flags: (response.flags ?? 0) | TRUNCATED_RESPONSE, answers: [], authorities: [] });
}
