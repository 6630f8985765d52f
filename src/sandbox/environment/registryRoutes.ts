// The registries a build reaches on port 443, each at a loopback address of its own: the build's
// /etc/hosts names the address, and the network holder's bridge, listening there, opens a tunnel
// through the registry proxy (CONNECT host:443, refused there as any other) for each connection.
// The installer then speaks TLS to the registry itself, as through the proxy, but as it does on the
// host: without a proxy agent, which in pnpm's case opens a tunnel and a TLS handshake per download
// and keeps none alive (pnpm's 43 downloads took 2.0–2.7 s through the proxy, 1.0–1.6 s in the same
// image on the host's network). Installers that ignore NO_PROXY still use the proxy.
import { isIP } from 'node:net';
import type { RegistryTarget } from './hostPackageSettings.js';

export interface RegistryRoute {
  /** The registry's host name, reached on port 443. */
  host: string;
  /** Where the build finds it: a loopback address the holder's bridge listens on (port 443). */
  address: string;
}

/** 254 routes at most (127.1.0.1 to 127.1.0.254); registries beyond them are reached through the proxy. */
const maxRoutes = 254;

/** The routes of the registries a build may reach on 443 (host names only: an address literal goes through the proxy). */
export function registryRoutes(allowed: readonly RegistryTarget[]): RegistryRoute[] {
  const hosts = new Set<string>();
  for (const target of allowed) {
    if (target.port !== 443 || isIP(target.host) !== 0 || target.host === 'localhost') continue;
    hosts.add(target.host);
  }
  return [...hosts].slice(0, maxRoutes).map((host, index) => ({ host, address: `127.1.0.${index + 1}` }));
}

/** The build's /etc/hosts: Docker's own for a container without a network, and the routes. */
export function hostsFile(routes: readonly RegistryRoute[]): string {
  return [
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    'fe00::0\tip6-localnet',
    'ff00::0\tip6-mcastprefix',
    'ff02::1\tip6-allnodes',
    'ff02::2\tip6-allrouters',
    ...routes.map((route) => `${route.address}\t${route.host}`),
    '',
  ].join('\n');
}
