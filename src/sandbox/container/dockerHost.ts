// Where the Docker engine is: DOCKER_HOST, or else Docker's usual unix socket (as docker and
// dockerode default). One place for it: setup names it, a quick check pings it, the tests pick lanes.

const defaultDockerHost = 'unix:///var/run/docker.sock';

export function dockerHostOf(env: NodeJS.ProcessEnv = process.env): string {
  return env.DOCKER_HOST || defaultDockerHost;
}

/** The socket's path of a unix:// host; null for any other (tcp, ssh), whose settings dockerode reads. */
export function unixSocketOf(host: string): string | null {
  return host.startsWith('unix://') ? host.slice('unix://'.length) : null;
}
