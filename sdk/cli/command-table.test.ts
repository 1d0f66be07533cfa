import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from './command-table';
import { GROUPS } from './command';
import { CLI_VERSION } from './version';

describe('the command table', () => {
  it('names each command once, under a known group, with a human rendering', () => {
    const names = COMMANDS.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    for (const spec of COMMANDS) {
      const words = spec.name.split(' ');
      if (words.length > 1) expect(Object.keys(GROUPS)).toContain(words[0]);
      expect(spec.human, spec.name).toBeTypeOf('function');
    }
  });

  it("reports the package's version", () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8'));
    expect(CLI_VERSION).toBe(pkg.version);
  });
});
