// --metrics-address's forms: host:port, an IP of either family in brackets (so that
// `[$(HOST_IP)]:9901` works on IPv4 and IPv6 nodes), :port for every interface; anything else
// undefined (the callers word the refusal).
import t from 'tap';
import { listenAddress } from '../src/listen-address.ts';

t.test('IPv4 and IPv6, bare or in brackets; names; every interface', async (t) => {
  t.same(listenAddress('192.0.2.10:9901'), { host: '192.0.2.10', port: 9901 });
  t.same(listenAddress('[192.0.2.10]:9901'), { host: '192.0.2.10', port: 9901 });
  t.same(listenAddress('[2001:db8::10]:9901'), { host: '2001:db8::10', port: 9901 });
  t.same(listenAddress('[::ffff:192.0.2.10]:9901'), { host: '::ffff:192.0.2.10', port: 9901 });
  t.same(listenAddress('node-1.example:0'), { host: 'node-1.example', port: 0 });
  t.same(listenAddress(':65535'), { host: undefined, port: 65535 });
});

t.test('not an address with a port', async (t) => {
  for (const bad of [
    '2001:db8::10:9901',
    '2001:db8::10',
    '[2001:db8::10]',
    '192.0.2.10',
    '[192.0.2.300]:1',
    '[node]:1',
    '[]:1',
    ':65536',
    '-x:1',
    '',
  ])
    t.equal(listenAddress(bad), undefined, bad);
});

t.test('the same answer as node:net for the addresses a node has', async (t) => {
  const net = await import('node:net');
  for (const ip of [
    '0.0.0.0',
    '255.255.255.255',
    '10.0.0.1',
    '::',
    '::1',
    'fe80::1',
    '2001:db8:0:0:0:0:0:10',
    '::ffff:10.0.0.1',
    '01.2.3.4',
    '1.2.3',
    '1::2::3',
    '12345::1',
    'g::1',
  ])
    t.equal(listenAddress(`[${ip}]:1`) !== undefined, net.isIP(ip) !== 0, ip);
});
