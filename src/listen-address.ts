// A listen address as envhook nri's --metrics-address takes it: `127.0.0.1:9901`, `[::1]:9901`,
// `localhost:9901`, `:9901` (every interface). An IPv4 address may be in brackets too
// (`[127.0.0.1]:9901`, as Go's net.SplitHostPort takes it), so that `[$(HOST_IP)]:9901` is an
// address with a port whichever family the node's IP is (docs/nri-status.md#metrics-and-health-endpoint).
// Pure: the settings check (schema.ts) and the server (nri/supervisor/http.ts) read it the same way. No
// node:net: every envhook start checks its settings file, and a container start loads no more
// than it needs (test/build.test.ts).

export interface ListenAddress {
  /** undefined: every interface (IPv6 and IPv4 where the host has both). */
  host: string | undefined;
  port: number;
}

const ADDRESS = /^(?:\[([^\]]*)\]|([^:[\]]*)):([0-9]{1,5})$/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$/;
const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** The host and port of `address`; undefined when it is not one of the forms above. */
export function listenAddress(address: string): ListenAddress | undefined {
  const m = ADDRESS.exec(address);
  if (!m || Number(m[3]) > 65535) return undefined;
  const bracketed = m[1];
  const name = m[2]!;
  const hostOk =
    bracketed !== undefined ? IPV4.test(bracketed) || isIPv6(bracketed) : name === '' || IPV4.test(name) || HOSTNAME.test(name);
  if (!hostOk) return undefined;
  return { host: bracketed ?? (name === '' ? undefined : name), port: Number(m[3]) };
}

/** An IPv6 address as URL's host parser reads one in brackets (the WHATWG rules: no zone). */
function isIPv6(text: string): boolean {
  return /^[0-9A-Fa-f:.]+$/.test(text) && text.includes(':') && URL.canParse(`http://[${text}]/`);
}
