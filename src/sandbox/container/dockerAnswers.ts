// Whether the Docker engine answers this user, for a command that drives no container itself (a
// `run` served by the background worker). On a unix socket, Docker's usual place, one request on
// it says so without loading Docker's client (a quarter of a second); any other DOCKER_HOST (tcp,
// TLS) is asked through the client, which reads its settings.
import { request } from 'node:http';
import { dockerHostOf, unixSocketOf } from './dockerHost.js';

export async function dockerAnswers(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const socketPath = unixSocketOf(dockerHostOf(env));
  if (socketPath === null) {
    const { connectDocker } = await import('./container.js');
    return connectDocker()
      .ping()
      .then(
        () => true,
        () => false,
      );
  }
  return new Promise((resolve) => {
    const ping = request({ socketPath, path: '/_ping', timeout: 10_000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    ping.on('error', () => resolve(false));
    ping.on('timeout', () => {
      ping.destroy();
      resolve(false);
    });
    ping.end();
  });
}
