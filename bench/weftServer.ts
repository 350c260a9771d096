import pino from 'pino';
import { startApp } from '../src/main/app';

/** Runs Weft headless on a prepared data dir and prints {origin, console, router} once listening. argv: <dataDir> [configFile] */
const app = await startApp({ dataDir: process.argv[2], configFile: process.argv[3], apiAddress: '127.0.0.1:0', logger: pino({ level: 'silent' }) });
process.stdout.write(JSON.stringify({ origin: app.urls.api, console: app.urls.console, router: app.urls.router }) + '\n');
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
