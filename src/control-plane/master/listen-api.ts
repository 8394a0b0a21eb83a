// Starts the API server and turns listen failures (port taken, address not ours) into StartupErrors.
import { startApiServer, type RunningApiServer, type StartApiServerOptions } from '../api-server/server.js';
import { portInUseMessage, StartupError } from '../../core/lifecycle/startup-error.js';

export async function listenApi(options: StartApiServerOptions): Promise<RunningApiServer> {
  try {
    return await startApiServer(options);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new StartupError(portInUseMessage({ port: options.port, what: 'API server', flag: '--port' }), { cause: err });
    if (code === 'EADDRNOTAVAIL')
      throw new StartupError(`cannot listen on ${options.address}: no interface of this machine has that address; check --address`, { cause: err });
    if (code === 'EACCES') throw new StartupError(`not allowed to listen on port ${options.port}; run as root or pass a --port above 1023`, { cause: err });
    throw err;
  }
}
