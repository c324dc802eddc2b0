import dns from 'node:dns';

/**
 * `*.localhost` resolves to loopback (RFC 6761 §6.3), as browsers and curl resolve it on their own:
 * the agents' addresses on the local stack are `http://<subdomain>.agents.localhost:<port>`. Node
 * asks the system resolver, which on some machines knows only `localhost` itself, so the test
 * workers answer those names here, the way a browser would, and pass every other name on.
 */
const systemLookup = dns.lookup;
const LOCALHOST_NAME = /(^|\.)localhost\.?$/i;

function lookup(hostname: string, options: unknown, callback?: unknown): void {
  const cb = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
  const opts = (typeof options === 'object' && options !== null ? options : {}) as dns.LookupOptions;
  if (!LOCALHOST_NAME.test(hostname)) (systemLookup as (...args: unknown[]) => void).call(dns, hostname, options, callback);
  else if (opts.all) process.nextTick(cb, null, [{ address: '127.0.0.1', family: 4 }]);
  else process.nextTick(cb, null, '127.0.0.1', 4);
}

dns.lookup = lookup as typeof dns.lookup;
