import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_NODE_FLAGS } from './node-flags';

describe("the agent's Node flags", () => {
  it('are the ones marquee-kiosk starts it with, bundled or not', () => {
    const launcher = fs.readFileSync(path.resolve(import.meta.dirname, '../linux/marquee-kiosk'), 'utf8');
    const starts = launcher.split('\n').filter((line) => /^exec node /.test(line.trim()));
    expect(starts).toHaveLength(2);
    for (const line of starts) expect(line.trim().startsWith(`exec node ${AGENT_NODE_FLAGS.join(' ')} `)).toBe(true);
  });
});
