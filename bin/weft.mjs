#!/usr/bin/env node
// Runs the TypeScript CLI directly (no build step) through tsx's loader.
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../src/main/cli.ts');
await main(process.argv.slice(2));
