#!/usr/bin/env node
// The `kiln` command. kiln ships TypeScript sources and runs them through tsx (no build step);
// the loader is registered here, before the first .ts import, and nothing else happens at load.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
await main(process.argv.slice(2));
