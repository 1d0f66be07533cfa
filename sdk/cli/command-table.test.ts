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

  it('has every command run as a subprocess of the built command by some test (the issue asks for it)', () => {
    // A test file that starts the built command (testing/cli-process) and names the command's words
    // as the first elements of an argument list: ['screen', 'takeover', …].
    const files = (fs.readdirSync(import.meta.dirname, { recursive: true }) as string[])
      .filter((file) => file.endsWith('.test.ts'))
      .map((file) => fs.readFileSync(path.join(import.meta.dirname, file), 'utf8'))
      .filter((text) => /from '(\.\.?\/)+testing\/cli-process'/.test(text) && /\b(runCli|startCli)\(/.test(text));
    const untested = COMMANDS.map((c) => c.name).filter((name) => {
      const words = name.split(' ').map((w) => `'${w}'`);
      const pattern = new RegExp(`\\[\\s*${words.join(',\\s*')}\\s*[,\\]]`);
      return !files.some((text) => pattern.test(text));
    });
    expect(untested).toEqual([]);
  });

  it("reports the package's version", () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8'));
    expect(CLI_VERSION).toBe(pkg.version);
  });
});
