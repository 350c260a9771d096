import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatNetwork, parseNetwork, type ImportResult } from './core/ops/index';
import { ApiError } from './core/errors';
import { ApiAnswerError, ManagementClient } from './share/managementClient';
import { ShareCliError } from './share/errors';

type Out = (line: string) => void;

export const EXPORT_HELP = `Usage: weft export [-o FILE] [--format json|yaml] [--data-dir DIR]

Writes the network (identities, services, configs and config types, the three policy kinds, posture checks, CAs,
external JWT signers, auth policies, edge routers) in the format of \`ziti ops export\`: references by name, no ids,
every list sorted by name, so two exports of the same network are the same bytes and diff cleanly. To stdout, or to
FILE. It asks the Weft running on DIR (default ./.weft), logged in with that data dir's admin client certificate.`;

export const IMPORT_HELP = `Usage: weft import FILE [--dry-run] [--data-dir DIR]

Imports a file of \`weft export\` or \`ziti ops export\` (JSON or YAML) into the Weft running on DIR (default ./.weft):
entries are matched by name, new ones created, changed ones updated (only the fields the file gives), the rest left
as they are; all in one transaction, so a bad entry changes nothing. --dry-run prints the plan and writes nothing.
Importing the same file again changes nothing.`;

/** `weft export` / `weft import`: exit code 0 when done, 1 on a failure, 2 on bad input. */
export async function runAscode(command: 'export' | 'import', argv: string[], out: Out, err: Out): Promise<number> {
  let values: { output?: string; format?: string; 'dry-run'?: boolean; 'data-dir'?: string; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: {
        output: { type: 'string', short: 'o' },
        format: { type: 'string' },
        'dry-run': { type: 'boolean' },
        'data-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: command === 'import',
    }));
  } catch (e) {
    err(`weft ${command}: ${(e as Error).message} (see weft ${command} --help)`);
    return 2;
  }
  if (values.help) return (out(command === 'export' ? EXPORT_HELP : IMPORT_HELP), 0);
  const dataDir = values['data-dir'] ?? '.weft';
  if (command === 'export') {
    const format = values.format ?? (values.output?.match(/\.ya?ml$/i) ? 'yaml' : 'json');
    if (format !== 'json' && format !== 'yaml') return (err(`weft export: --format must be json or yaml, not "${format}"`), 2);
    return run(
      command,
      err,
      async (client) => {
        const text = formatNetwork(await client.call<Record<string, unknown>>('GET', '/ascode'), format);
        if (values.output) writeFileSync(values.output, text);
        else out(text.trimEnd());
      },
      dataDir,
    );
  }
  if (positionals.length !== 1) return (err('weft import: name one FILE (see weft import --help)'), 2);
  let doc: unknown;
  try {
    doc = parseNetwork(readFileSync(positionals[0]!, 'utf8'));
  } catch (e) {
    err(`weft import: ${positionals[0]}: ${e instanceof ApiError ? e.fieldCause?.reason : (e as Error).message}`);
    return 2;
  }
  const dryRun = !!values['dry-run'];
  return run(
    command,
    err,
    async (client) => {
      const result = await client.call<ImportResult>('POST', `/ascode/import${dryRun ? '?dryRun=true' : ''}`, doc);
      for (const p of result.plan) {
        if (p.action === 'unchanged') continue;
        const detail = p.fields ? ` (${p.fields.join(', ')})` : p.reason ? ` (${p.reason})` : '';
        out(`${p.action.padEnd(7)} ${p.section} "${p.name}"${detail}`);
      }
      const c = result.counts;
      out(
        `${dryRun ? 'would create' : 'created'} ${c.create}, ${dryRun ? 'update' : 'updated'} ${c.update}, unchanged ${c.unchanged}, skipped ${c.skip}`,
      );
    },
    dataDir,
  );
}

async function run(command: string, err: Out, fn: (client: ManagementClient) => Promise<void>, dataDir: string): Promise<number> {
  let client: ManagementClient | undefined;
  try {
    client = await ManagementClient.login(dataDir);
    await fn(client);
    return 0;
  } catch (e) {
    if (e instanceof ApiAnswerError) err(`weft ${command}: ${e.code ?? 'error'}: ${e.message}`);
    else err(`weft ${command}: ${(e as Error).message}`);
    return e instanceof ApiAnswerError && e.status === 400 ? 2 : e instanceof ShareCliError ? e.exitCode : 1;
  } finally {
    await client?.close();
  }
}
