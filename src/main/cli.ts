import { parseArgs } from 'node:util';
import { ConfigError } from './config';
import { startApp, type App } from './app';
import { WEFT_VERSION } from './version';

export const HELP = `Weft ${WEFT_VERSION}: a self-contained overlay-network controller

Usage:
  weft [start] [options]          start the controller (the default command)
  weft share public <target> --backend-mode proxy|web [options]
                                  publish a local URL or directory on the public frontend (see weft share --help)
  weft share release <token>      remove a share created with weft share public --reserved
  weft share host <grant>         host an overlay share created with weft share public --remote (any machine that
                                  reaches Weft's edge router)
  weft migrate [--database URL]   create or upgrade the database's schema and exit (see weft migrate --help)
  weft db copy --from A --to B    copy a network between databases, e.g. a lab's SQLite file to PostgreSQL
  weft backup [-o FILE]           write an encrypted backup: database + PKI + keys (see weft backup --help)
  weft restore FILE --data-dir DIR [--database URL]
                                  restore a backup into an empty data directory (see weft restore --help)
  weft export [-o FILE] [--format json|yaml]
                                  write the network as code (the format of ziti ops export; see weft export --help)
  weft import FILE [--dry-run]    import such a file (weft's or ziti ops export's) in one transaction; --dry-run
                                  prints what would change (see weft import --help)
  weft help                       show this help

Options for start:
  --data-dir DIR                  where the database, PKI and logs live (default ./.weft)
  --config FILE                   YAML configuration file (validated at start)
  --database URL                  postgres://user@host/db to run on PostgreSQL (several Weft nodes may share it),
                                  or a SQLite file (default DATA_DIR/weft.db)
  --api-address HOST:PORT         controller API listener (default 127.0.0.1:1280; port 0 picks a free port)
  --api-brand svc|ziti            brand word sent to clients (MFA auth query provider); ziti for stock OpenZiti SDKs
  --api-oidc on|off               OpenZiti's OIDC authentication (/oidc, the OIDC_AUTH capability; default on)
  --router-listener tls:HOST:PORT built-in edge router listener (default tls:127.0.0.1:3022, or a free port when
                                  that one is taken; port 0 picks a free port); off = no router
  --ctrl-listener tls:HOST:PORT   control channel stock OpenZiti routers dial (default tls:127.0.0.1:6262, or a free
                                  port when that one is taken; port 0 picks a free port); off = none
  --log-format auto|pretty|json   log lines on stderr: readable on a terminal (auto), or always readable or JSON
  --console-address HOST:PORT     operator console listener, loopback only (default 127.0.0.1:1281, or a free
                                  port when that one is taken)
  --metrics-address HOST:PORT     Prometheus metrics listener, GET /metrics (default 127.0.0.1:1282, or a free port
                                  when that one is taken); off = none; off loopback only with metrics.bearer_token_file
  -h, --help                      show this help

Environment:
  WEFT_ADMIN_USERNAME             username of the default admin created on first start (default admin)
  WEFT_ADMIN_PASSWORD             its password; when unset one is generated and printed once
  WEFT_BACKUP_PASSPHRASE          passphrase of weft backup and weft restore (or --passphrase-file FILE)
`;

type Out = (line: string) => void;

/** Entry point of `weft` / `npm start`. Returns the started app for `start` (tests use it), else undefined. */
export async function main(
  argv: string[],
  out: Out = (l) => process.stdout.write(l + '\n'),
  err: Out = (l) => process.stderr.write(l + '\n'),
): Promise<App | undefined> {
  const command = argv[0] && !argv[0].startsWith('-') ? argv[0] : 'start';
  const rest = command === argv[0] ? argv.slice(1) : argv;
  if (command === 'help') {
    out(HELP);
    return undefined;
  }
  if (command === 'share') {
    const { processShareIo, runShareCommand } = await import('./share/shareCommand');
    const io = processShareIo(out, err);
    try {
      process.exitCode = await runShareCommand(rest, io);
    } finally {
      io.dispose();
    }
    return undefined;
  }
  if (command === 'migrate' || command === 'db') {
    const { runDb, runMigrate } = await import('./dbCommand');
    process.exitCode = await (command === 'migrate' ? runMigrate : runDb)(rest, out, err);
    return undefined;
  }
  if (command === 'backup' || command === 'restore') {
    const { runBackup, runRestore } = await import('./backupCommand');
    process.exitCode = await (command === 'backup' ? runBackup : runRestore)(rest, out, err);
    return undefined;
  }
  if (command === 'export' || command === 'import') {
    const { runAscode } = await import('./ascodeCommand');
    process.exitCode = await runAscode(command, rest, out, err);
    return undefined;
  }
  if (command !== 'start') {
    err(`weft: unknown command "${command}" (see weft --help)`);
    process.exitCode = 2;
    return undefined;
  }
  let values: {
    'data-dir'?: string;
    database?: string;
    config?: string;
    'api-address'?: string;
    'api-brand'?: string;
    'api-oidc'?: string;
    'log-format'?: string;
    'console-address'?: string;
    'metrics-address'?: string;
    'router-listener'?: string;
    'ctrl-listener'?: string;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        'data-dir': { type: 'string' },
        database: { type: 'string' },
        config: { type: 'string' },
        'api-address': { type: 'string' },
        'api-brand': { type: 'string' },
        'api-oidc': { type: 'string' },
        'log-format': { type: 'string' },
        'router-listener': { type: 'string' },
        'ctrl-listener': { type: 'string' },
        'console-address': { type: 'string' },
        'metrics-address': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    err(`weft: ${(e as Error).message} (see weft --help)`);
    process.exitCode = 2;
    return undefined;
  }
  if (values.help) {
    out(HELP);
    return undefined;
  }
  // Signals are handled from the start, so an interrupt during start-up still shuts down cleanly.
  let starting: Promise<App | undefined> | undefined;
  const stop = async () => {
    const running = await starting?.catch(() => undefined);
    await running?.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  starting = startApp({
    dataDir: values['data-dir'],
    database: values.database,
    configFile: values.config,
    apiAddress: values['api-address'],
    apiBrand: values['api-brand'],
    apiOidc: values['api-oidc'],
    logFormat: values['log-format'],
    consoleAddress: values['console-address'],
    metricsAddress: values['metrics-address'],
    routerListener: values['router-listener'],
    ctrlListener: values['ctrl-listener'],
  });
  let app: App;
  try {
    app = (await starting)!;
  } catch (e) {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    if (e instanceof ConfigError) {
      err(`weft: ${e.message}`);
      process.exitCode = 2;
      return undefined;
    }
    err(`weft: could not start: ${(e as Error).message}`);
    process.exitCode = 1;
    return undefined;
  }
  const lines = [
    `Weft ${WEFT_VERSION}`,
    `  data dir:        ${app.dataDir}`,
    `  controller API:  ${app.urls.api}`,
    `  client API:      ${app.urls.client}`,
    `  management API:  ${app.urls.management}`,
    ...(app.router ? [`  edge router:     ${app.router.url}   (${app.router.name}; SDKs and tunnelers connect here)`] : []),
    ...(app.ctrl ? [`  control channel: ${app.ctrl.address}   (stock OpenZiti routers connect here)`] : []),
    ...(app.urls.frontend
      ? [
          `  public shares:   ${app.urls.frontend.shareUrl}   (health: ${app.urls.frontend.publicListener}/health)`,
          ...(app.urls.frontend.oauthEndpoint
            ? [`  OAuth endpoint:  ${app.urls.frontend.oauthEndpoint}   (health: ${app.urls.frontend.oauthListener}/health)`]
            : []),
        ]
      : []),
    ...(app.console
      ? [
          `  console:         ${app.console.url}`,
          `  console login:   ${app.console.createLoginLink()}   (one-time link, valid ${app.config.console.login_link_ttl}; then sign in with username and password)`,
        ]
      : []),
    ...(app.urls.metrics ? [`  metrics:         ${app.urls.metrics}   (Prometheus)`] : []),
    `  admin username:  ${app.admin.username}`,
  ];
  if (app.admin.generatedPassword) {
    lines.push(`  admin password:  ${app.admin.generatedPassword}   (generated on first start and shown only this once)`);
  }
  out(lines.join('\n'));
  return app;
}
