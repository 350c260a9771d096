import pino from 'pino';
import { startApp } from '../src/main/app';

/**
 * Weft for the frontend bench: the whole app (API + frontend) from a config file, logging every request at info
 * level with a synchronous write per line, as `weft start` does to stderr (here to a file, not the terminal).
 * Prints {api, shareUrl, publicListener} once listening. argv: <dataDir> <configFile> <logFile>
 */
const [dataDir, configFile, logFile] = process.argv.slice(2);
const app = await startApp({
  dataDir,
  configFile,
  apiAddress: '127.0.0.1:0',
  logger: pino({ level: 'info' }, pino.destination({ dest: logFile!, sync: true })),
  env: { WEFT_ADMIN_USERNAME: 'admin', WEFT_ADMIN_PASSWORD: 'bench-admin-password' },
});
const f = app.urls.frontend!;
process.stdout.write(JSON.stringify({ api: app.urls.api, shareUrl: f.shareUrl, publicListener: f.publicListener }) + '\n');
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
