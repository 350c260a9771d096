import type { Server } from 'node:net';

/**
 * Listens on host:port and resolves with the bound port. With `defaultAddress`, the address was not chosen by the
 * user: when it is taken, any free port is used instead (`onFallback` says so).
 */
export async function listenOn(server: Server, host: string, port: number, fallback?: { onFallback(): void }): Promise<number> {
  const once = (p: number) =>
    new Promise<number>((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      server.once('error', onError);
      server.listen(p, host, () => {
        server.removeListener('error', onError);
        resolve((server.address() as { port: number }).port);
      });
    });
  try {
    return await once(port);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || !fallback) throw e;
    fallback.onFallback();
    return once(0);
  }
}
