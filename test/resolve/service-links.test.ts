import t from 'tap';
import { serviceLinkNames, servicePrefixes } from '../../src/resolve/service-links.ts';

// What the kubelet makes for services `redis-primary` (ports 6379/TCP named "redis", 9121/TCP
// named "metrics"), `dns` (53/UDP, 53/TCP) and `web` (80/TCP unnamed, 443/SCTP), plus `kubernetes`.
const services = [
  'REDIS_PRIMARY_SERVICE_HOST=10.0.0.11',
  'REDIS_PRIMARY_SERVICE_PORT=6379',
  'REDIS_PRIMARY_SERVICE_PORT_REDIS=6379',
  'REDIS_PRIMARY_SERVICE_PORT_METRICS=9121',
  'REDIS_PRIMARY_PORT=tcp://10.0.0.11:6379',
  'REDIS_PRIMARY_PORT_6379_TCP=tcp://10.0.0.11:6379',
  'REDIS_PRIMARY_PORT_6379_TCP_PROTO=tcp',
  'REDIS_PRIMARY_PORT_6379_TCP_PORT=6379',
  'REDIS_PRIMARY_PORT_6379_TCP_ADDR=10.0.0.11',
  'REDIS_PRIMARY_PORT_9121_TCP=tcp://10.0.0.11:9121',
  'REDIS_PRIMARY_PORT_9121_TCP_PROTO=tcp',
  'REDIS_PRIMARY_PORT_9121_TCP_PORT=9121',
  'REDIS_PRIMARY_PORT_9121_TCP_ADDR=10.0.0.11',
  'DNS_SERVICE_HOST=10.0.0.10',
  'DNS_SERVICE_PORT=53',
  'DNS_PORT=udp://10.0.0.10:53',
  'DNS_PORT_53_UDP=udp://10.0.0.10:53',
  'DNS_PORT_53_UDP_PROTO=udp',
  'DNS_PORT_53_UDP_PORT=53',
  'DNS_PORT_53_UDP_ADDR=10.0.0.10',
  'DNS_PORT_53_TCP=tcp://10.0.0.10:53',
  'DNS_PORT_53_TCP_PROTO=tcp',
  'DNS_PORT_53_TCP_PORT=53',
  'DNS_PORT_53_TCP_ADDR=10.0.0.10',
  'WEB_SERVICE_HOST=10.0.0.12',
  'WEB_SERVICE_PORT=80',
  'WEB_PORT=tcp://10.0.0.12:80',
  'WEB_PORT_80_TCP=tcp://10.0.0.12:80',
  'WEB_PORT_80_TCP_PROTO=tcp',
  'WEB_PORT_80_TCP_PORT=80',
  'WEB_PORT_80_TCP_ADDR=10.0.0.12',
  'WEB_PORT_443_SCTP=sctp://10.0.0.12:443',
  'WEB_PORT_443_SCTP_PROTO=sctp',
  'WEB_PORT_443_SCTP_PORT=443',
  'WEB_PORT_443_SCTP_ADDR=10.0.0.12',
];
const kubernetes = [
  'KUBERNETES_SERVICE_HOST=10.0.0.1',
  'KUBERNETES_SERVICE_PORT=443',
  'KUBERNETES_SERVICE_PORT_HTTPS=443',
  'KUBERNETES_PORT=tcp://10.0.0.1:443',
  'KUBERNETES_PORT_443_TCP=tcp://10.0.0.1:443',
  'KUBERNETES_PORT_443_TCP_PROTO=tcp',
  'KUBERNETES_PORT_443_TCP_PORT=443',
  'KUBERNETES_PORT_443_TCP_ADDR=10.0.0.1',
];
const app = [
  'PATH=/bin',
  'FOO_PORT=8080',
  'FOO_SERVICE_PORT=1',
  'WEB_PORT_X=keep',
  'WEB_PORTAL=keep',
  'WEB_PORT_80_HTTP=keep',
  'WEB_SERVICE_HOSTNAME=keep',
  'DNS_PORT_53_UDP_EXTRA=keep',
];
const names = (list: string[]) => list.map((e) => e.slice(0, e.indexOf('=')));

t.test('three services removed by family; kubernetes and the app variables kept', async (t) => {
  const all = names([...app.slice(0, 3), ...services, ...kubernetes, ...app.slice(3)]);
  t.same([...servicePrefixes(all)].sort(), ['DNS', 'REDIS_PRIMARY', 'WEB']);
  t.same(serviceLinkNames(all), names(services));
});

t.test('no X_SERVICE_HOST, no service: FOO_PORT and FOO_SERVICE_PORT stay', async (t) => {
  t.same(serviceLinkNames(['FOO_PORT', 'FOO_SERVICE_PORT', 'FOO_PORT_80_TCP']), []);
});

t.test('kubernetes family is kept even where another service family would match it', async (t) => {
  // A service named kubernetes-service: X = KUBERNETES_SERVICE, X_PORT = KUBERNETES_SERVICE_PORT.
  const list = ['KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT', 'KUBERNETES_SERVICE_SERVICE_HOST', 'KUBERNETES_SERVICE_SERVICE_PORT'];
  t.same(serviceLinkNames(list), ['KUBERNETES_SERVICE_SERVICE_HOST', 'KUBERNETES_SERVICE_SERVICE_PORT']);
  t.same(serviceLinkNames(['_SERVICE_HOST', '_PORT']), [], 'an empty service name is no service');
});
