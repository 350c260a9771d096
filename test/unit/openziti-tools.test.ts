import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/app';
import { INSTALL_COMMAND, openzitiTools } from '../interop/tools';

describe('interop tool discovery', () => {
  const saved = process.env.WEFT_OPENZITI_DIR;
  afterEach(() => {
    if (saved === undefined) delete process.env.WEFT_OPENZITI_DIR;
    else process.env.WEFT_OPENZITI_DIR = saved;
  });

  it('fails naming the install command when the tools are missing, or built from other pins', () => {
    const dir = tempDir();
    process.env.WEFT_OPENZITI_DIR = dir;
    expect(() => openzitiTools()).toThrow(`run \`${INSTALL_COMMAND}\``);
    mkdirSync(dir, { recursive: true });
    for (const f of ['ziti', 'weft-sdk-client']) writeFileSync(join(dir, f), '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(join(dir, 'stamp'), 'stale\n');
    expect(() => openzitiTools()).toThrow(/out of date: run `npm run openziti-tools`/);
  });
});
