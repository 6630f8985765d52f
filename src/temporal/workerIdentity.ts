// The identity a worker host's workers poll with: where it runs, which sandbox host it is and,
// when it serves metrics, where they are. Anyone who can describe the task queue (the `hosts`
// command, `npm run cluster -- metrics`) finds the fleet's hosts and their metrics through it.

export interface WorkerHostIdentity {
  /** `pid@machine`, as the SDK's default identity. */
  process: string;
  /** The sandbox host's id (DURABLE_DEBUGGER_HOST_ID), or null for a worker that does not say. */
  hostId: string | null;
  /** Its Prometheus endpoint (http://machine:port/metrics), or null when it serves none. */
  metricsUrl: string | null;
}

/**
 * The identity of a host's workers. The metrics address is the machine's name, not the bind
 * address (0.0.0.0): what another machine of the fleet can reach; `metricsHost` names another
 * (an address, where names do not resolve across the fleet, or the host side of a container).
 */
export function workerHostIdentity(options: {
  pid: number;
  machine: string;
  hostId: string;
  metricsPort: number | null;
  metricsHost?: string;
}): string {
  const host = urlHost(options.metricsHost ?? options.machine);
  const metrics = options.metricsPort === null ? '' : ` metrics:http://${host}:${options.metricsPort}/metrics`;
  return `${options.pid}@${options.machine} host:${options.hostId}${metrics}`;
}

/** Reads an identity back; another worker's (an older version, the Temporal CLI) has no host and no metrics. */
export function parseWorkerHostIdentity(identity: string): WorkerHostIdentity {
  const match = /^(\S+) host:(\S+)(?: metrics:(http:\/\/\S+))?$/.exec(identity);
  if (!match) return { process: identity, hostId: null, metricsUrl: null };
  return { process: match[1] as string, hostId: match[2] as string, metricsUrl: match[3] ?? null };
}

/** An IPv6 address goes in brackets in a URL. */
function urlHost(machine: string): string {
  return machine.includes(':') ? `[${machine}]` : machine;
}
