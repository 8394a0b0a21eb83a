// Unit tests for the overlay's iptables rules: their text, the up-to-date check, and what sync runs against a fake iptables.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NetCommandError, type NetCommand } from '../net-command.js';
import { chainUpToDate, FORWARD_CHAIN, NAT_CHAIN, overlayRules, restoreInput, syncOverlayIptables } from './overlay-iptables.js';

const rules = overlayRules({ clusterCIDR: '10.244.0.0/16', podCIDR: '10.244.1.0/24' });

describe('overlayRules', () => {
  it("forwards from and to the cluster CIDR; masquerades only this node's pods leaving it", () => {
    assert.deepEqual(rules, {
      filter: [
        '-A MINIK8S-OVERLAY-FWD -s 10.244.0.0/16 -m comment --comment "minik8s overlay: from pods" -j ACCEPT',
        '-A MINIK8S-OVERLAY-FWD -d 10.244.0.0/16 -m comment --comment "minik8s overlay: to pods" -j ACCEPT',
      ],
      nat: [
        '-A MINIK8S-OVERLAY-NAT -s 10.244.1.0/24 -d 10.244.0.0/16 -m comment --comment "minik8s overlay: pod to pod keeps its source" -j RETURN',
        '-A MINIK8S-OVERLAY-NAT -s 10.244.1.0/24 ! -d 224.0.0.0/4 -m comment --comment "minik8s overlay: pods to outside the cluster" -j MASQUERADE',
      ],
    });
  });

  it('declares (and so flushes) only its own chains for iptables-restore --noflush', () => {
    const text = restoreInput(rules);
    assert.deepEqual(
      text.split('\n').filter((l) => l.startsWith(':') || l.startsWith('*')),
      ['*filter', `:${FORWARD_CHAIN} - [0:0]`, '*nat', `:${NAT_CHAIN} - [0:0]`],
    );
    assert.ok(text.endsWith('COMMIT\n'));
  });
});

describe('chainUpToDate', () => {
  const listed = `-N ${FORWARD_CHAIN}\n${rules.filter.join('\n')}\n`;
  const cases: [string, string | undefined, boolean][] = [
    ['the same rules', listed, true],
    ['a missing chain', undefined, false],
    ['an empty chain', `-N ${FORWARD_CHAIN}\n`, false],
    ['a rule added by hand', `${listed}-A ${FORWARD_CHAIN} -j DROP\n`, false],
    ['another cluster CIDR', listed.replaceAll('10.244.0.0/16', '10.245.0.0/16'), false],
    ['rules in another order', `-N ${FORWARD_CHAIN}\n${[...rules.filter].reverse().join('\n')}\n`, false],
  ];
  for (const [name, text, want] of cases) it(`${name}: ${want}`, () => assert.equal(chainUpToDate(FORWARD_CHAIN, text, rules.filter), want));
});

describe('syncOverlayIptables against a fake iptables', () => {
  function fakeIptables(o: { chains: Record<string, string[] | undefined>; jumps: Set<string> }) {
    const calls: string[] = [];
    const run = async (c: NetCommand): Promise<string> => {
      const text = `${c.tool} ${c.args.join(' ')}`;
      const list = /^iptables -w -t (\w+) -S (\S+)$/.exec(text);
      if (list) {
        const chain = o.chains[list[2]!];
        if (!chain) throw new NetCommandError(c, `chain \`${list[2]}' in table \`${list[1]}' is incompatible, use 'nft' tool.`);
        return [`-N ${list[2]}`, ...chain, ''].join('\n');
      }
      const check = /^iptables -w -t (\w+) -C (\S+) -j (\S+)$/.exec(text);
      if (check) {
        if (!o.jumps.has(`${check[2]}->${check[3]}`)) throw new NetCommandError(c, 'iptables: Bad rule (does a matching rule exist in that chain?).');
        return '';
      }
      calls.push(c.input ? `${text} <<${c.input.split('\n').length} lines` : text);
      return '';
    };
    return { run, calls };
  }

  it('on a fresh machine: writes both chains in one restore and inserts both jumps first', async () => {
    const fake = fakeIptables({ chains: {}, jumps: new Set() });
    const changed = await syncOverlayIptables(fake.run, rules);
    assert.deepEqual(fake.calls, [
      'iptables-restore -w --noflush <<11 lines',
      `iptables -w -t filter -I FORWARD 1 -j ${FORWARD_CHAIN}`,
      `iptables -w -t nat -I POSTROUTING 1 -j ${NAT_CHAIN}`,
    ]);
    assert.equal(changed.length, 3);
  });

  it('changes nothing when all is in place', async () => {
    const fake = fakeIptables({
      chains: { [FORWARD_CHAIN]: rules.filter, [NAT_CHAIN]: rules.nat },
      jumps: new Set([`FORWARD->${FORWARD_CHAIN}`, `POSTROUTING->${NAT_CHAIN}`]),
    });
    assert.deepEqual(await syncOverlayIptables(fake.run, rules), []);
    assert.deepEqual(fake.calls, []);
  });

  it('rewrites the chains when one differs, and puts back a jump someone removed', async () => {
    const fake = fakeIptables({
      chains: { [FORWARD_CHAIN]: rules.filter, [NAT_CHAIN]: [] },
      jumps: new Set([`FORWARD->${FORWARD_CHAIN}`]),
    });
    await syncOverlayIptables(fake.run, rules);
    assert.deepEqual(fake.calls, ['iptables-restore -w --noflush <<11 lines', `iptables -w -t nat -I POSTROUTING 1 -j ${NAT_CHAIN}`]);
  });
});
