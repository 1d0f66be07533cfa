#!/usr/bin/env node
// `npx marquee …` from the repository: runs the TypeScript entry through tsx (a dependency).
// A published package would ship a built main.js instead (see docs/cli.md).
import { register } from 'tsx/esm/api';

register();
await import('../main.ts');
