// One writer per event type: a type's literal appears as an event `type` in one place of the server,
// so its details are built once (two hand-built writers of one type drift apart).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../sdk/contract/event-types';

const server = path.resolve(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return /\.ts$/.test(e.name) && !/\.(test|testing|fixtures)\.ts$/.test(e.name) ? [full] : [];
  });
}

describe('event writers', () => {
  it('build each event type in at most one place', () => {
    const texts = sources(server).map((file) => [path.relative(server, file), fs.readFileSync(file, 'utf8')] as const);
    const writers = Object.keys(EVENT_TYPES).map((type) => {
      // A value, not a member of a type union (`type: 'screen.paired' | 'screen.provisioned'`).
      const literal = new RegExp(`type: '${type.replace('.', '\\.')}'(?!\\s*\\|)`, 'g');
      return [type, texts.flatMap(([file, text]) => (text.match(literal) ?? []).map(() => file))] as const;
    });
    expect(writers.filter(([, files]) => files.length > 1)).toEqual([]);
    // The check sees the writers it is meant to count.
    expect(Object.fromEntries(writers)['screen.manifest_changed']).toEqual(['manifests/remint.ts']);
  });
});
