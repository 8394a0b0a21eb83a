// Unit tests for building DNS responses: answers, NXDOMAIN and NODATA with the SOA, forwarding, errors, UDP truncation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AUTHORITATIVE_ANSWER, decode, encode, RECURSION_DESIRED, TRUNCATED_RESPONSE, type Packet, type RecordType } from 'dns-packet';
import type { Service } from '../../core/api/service.js';
import { buildClusterZone } from './cluster-zone.js';
import { answerQuery, CLASSIC_UDP_SIZE, EDNS_UDP_SIZE, encodeForUdp, errorResponse, RCODE, rcodeOf, udpLimitFor, type QueryOutcome } from './dns-answer.js';

function svc(namespace: string, name: string, clusterIP: string): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace, name },
    spec: { type: 'ClusterIP', clusterIP, ports: [], sessionAffinity: 'None' },
    status: {},
  } as Service;
}

const zone = buildClusterZone({ services: [svc('default', 'web', '10.96.0.20')] });

/** A query as a client sends it, through the wire format and back, so the decoder's view is what is tested. */
function query(name: string, type: RecordType | 'ANY' = 'A', extra: Partial<Packet> = {}) {
  return decode(encode({ type: 'query', id: 4242, flags: RECURSION_DESIRED, questions: [{ name, type: type as RecordType, class: 'IN' }], ...extra }));
}

function answered(outcome: QueryOutcome) {
  assert.equal(outcome.type, 'answer');
  // Whatever we build must encode, and decode to what a client will see.
  return decode(encode((outcome as { response: Packet }).response));
}

describe('answerQuery', () => {
  it('answers a service name with its ClusterIP: authoritative, recursion flags, the question echoed, TTL 5', () => {
    const r = answered(answerQuery(query('Web.default.svc.cluster.local'), zone));
    assert.equal(r.id, 4242);
    assert.equal(r.type, 'response');
    assert.equal(rcodeOf(r), RCODE.NOERROR);
    assert.ok(r.flag_aa && r.flag_rd && r.flag_ra);
    assert.deepEqual(r.questions, [{ name: 'Web.default.svc.cluster.local', type: 'A', class: 'IN' }]);
    assert.deepEqual(
      r.answers?.map((a) => [a.type, a.name, (a as { data: string }).data, (a as { ttl: number }).ttl]),
      [['A', 'Web.default.svc.cluster.local', '10.96.0.20', 5]],
    );
    assert.deepEqual(r.authorities, []);
  });

  it('answers NXDOMAIN with the zone SOA for unknown names under the domain', () => {
    const r = answered(answerQuery(query('nope.default.svc.cluster.local'), zone));
    assert.equal(rcodeOf(r), RCODE.NXDOMAIN);
    assert.deepEqual(r.answers, []);
    assert.equal(r.authorities?.[0]?.type, 'SOA');
    assert.equal(r.authorities?.[0]?.name, 'cluster.local');
    assert.equal((r.authorities?.[0] as { data: { minimum: number } } | undefined)?.data.minimum, 5);
  });

  for (const type of ['AAAA', 'TXT', 'MX', 'SRV'] as const) {
    it(`answers ${type} for a known name with NOERROR and no answers (NODATA) plus the SOA`, () => {
      const r = answered(answerQuery(query('web.default.svc.cluster.local', type), zone));
      assert.equal(rcodeOf(r), RCODE.NOERROR);
      assert.deepEqual(r.answers, []);
      assert.equal(r.authorities?.[0]?.type, 'SOA');
    });
  }

  it('answers the zone SOA itself', () => {
    const r = answered(answerQuery(query('cluster.local', 'SOA'), zone));
    assert.equal(r.answers?.[0]?.type, 'SOA');
  });

  it('forwards names that are not ours', () => {
    assert.deepEqual(answerQuery(query('example.org'), zone), { type: 'forward' });
    assert.deepEqual(answerQuery(query('example.org', 'AAAA'), zone), { type: 'forward' });
  });

  it('answers SERVFAIL under the domain before the caches listed', () => {
    const r = answered(answerQuery(query('web.default.svc.cluster.local'), buildClusterZone({ services: [], synced: false })));
    assert.equal(rcodeOf(r), RCODE.SERVFAIL);
  });

  it('drops responses, refuses other opcodes and several questions', () => {
    assert.deepEqual(answerQuery(decode(encode({ type: 'response', id: 1, questions: [{ name: 'a', type: 'A' }] })), zone), { type: 'drop' });
    const notify = decode(encode({ type: 'query', id: 2, flags: 4 << 11, questions: [{ name: 'cluster.local', type: 'SOA' }] }));
    assert.equal(rcodeOf(answered(answerQuery(notify, zone))), RCODE.NOTIMP);
    const two = decode(
      encode({
        type: 'query',
        id: 3,
        questions: [
          { name: 'a.cluster.local', type: 'A' },
          { name: 'b.cluster.local', type: 'A' },
        ],
      }),
    );
    assert.equal(rcodeOf(answered(answerQuery(two, zone))), RCODE.FORMERR);
  });

  it('answers with an EDNS record when the query had one', () => {
    const withOpt = query('web.default.svc.cluster.local', 'A', {
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 4096, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }],
    });
    const r = answered(answerQuery(withOpt, zone));
    assert.equal(r.additionals?.[0]?.type, 'OPT');
    assert.equal(udpLimitFor(withOpt), EDNS_UDP_SIZE);
    assert.equal(udpLimitFor(query('x')), CLASSIC_UDP_SIZE);
  });
});

describe('errorResponse', () => {
  it('keeps the id and question, sets the rcode, claims no authority', () => {
    const r = decode(encode(errorResponse(query('example.org'), RCODE.SERVFAIL)));
    assert.equal(r.id, 4242);
    assert.equal(rcodeOf(r), RCODE.SERVFAIL);
    assert.equal(r.flag_aa, false);
    assert.equal(r.questions?.[0]?.name, 'example.org');
  });
});

describe('encodeForUdp', () => {
  const many: Packet = {
    type: 'response',
    id: 7,
    flags: AUTHORITATIVE_ANSWER,
    questions: [{ name: 'h.db.svc.cluster.local', type: 'A' }],
    answers: Array.from({ length: 60 }, (_, i) => ({ type: 'A' as const, name: 'h.db.svc.cluster.local', ttl: 5, data: `10.244.0.${i + 1}` })),
  };
  it('sends what fits as it is', () => {
    const small = { ...many, answers: many.answers!.slice(0, 2) };
    assert.deepEqual(decode(encodeForUdp(small, 512)).answers?.length, 2);
  });
  it('sends the header and question with TC when the answer does not fit', () => {
    const r = decode(encodeForUdp(many, 512));
    assert.ok(((r.flags ?? 0) & TRUNCATED_RESPONSE) !== 0);
    assert.deepEqual(r.answers, []);
    assert.equal(r.questions?.length, 1);
    assert.equal(decode(encodeForUdp(many, 4096)).answers?.length, 60);
  });
});
