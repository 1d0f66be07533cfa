// The declarations `npm run build:sdk` writes beside the app bridge type an app's use of it: an
// ES module app importing marquee-app.mjs and a classic page using window.marquee both compile
// under strict TypeScript, and a wrong call fails to (the types are the code's, not `any`).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDeclarations, TSC } from '../build-declarations';

let app: string;

beforeAll(() => {
  app = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-app-types-'));
  buildDeclarations(path.join(app, 'vendor'));
}, 60_000);
afterAll(() => fs.rmSync(app, { recursive: true, force: true }));

/** Compiles the app's files under `resolution`; the compiler's messages, or '' when it compiled. */
function compile(files: Record<string, string>, resolution: 'bundler' | 'nodenext'): string {
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(app, name), text);
  const options = {
    strict: true,
    noEmit: true,
    target: 'ES2022',
    module: resolution === 'bundler' ? 'ESNext' : 'NodeNext',
    moduleResolution: resolution,
    lib: ['ES2022', 'DOM'],
    types: [],
  };
  fs.writeFileSync(
    path.join(app, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: options, files: Object.keys(files) }),
  );
  try {
    execFileSync(process.execPath, [TSC, '-p', app], { encoding: 'utf8' });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout);
  }
}

const MODULE_APP = `import { BridgeError, connect, type BridgeContext, type KVEntry, type MarqueeApp } from './vendor/marquee-app.mjs';
const app: MarqueeApp = connect();
export async function count(): Promise<number> {
  const context: BridgeContext = await app.ready();
  const entry: KVEntry | null = await app.kv.get('counter');
  const next = (entry ? Number(app.kv.text(entry)) : 0) + 1;
  if (context.capabilities['kv.write']) await app.kv.set('counter', String(next), entry ? { expectedRevision: entry.revision } : {});
  return next;
}
export const isBridgeError = (e: unknown): boolean => e instanceof BridgeError && e.code === 'revision_conflict';
`;

const CLASSIC_APP = `/// <reference path="./vendor/marquee-app.d.ts" />
export async function show(): Promise<string> {
  const context = await window.marquee.ready();
  window.marquee.onViewportChange((change) => console.log(change.viewport.width, change.placement.height));
  return context.screenId ?? context.placementId;
}
`;

describe('the app bridge’s declarations', () => {
  it.each(['bundler', 'nodenext'] as const)(
    'type an ES module app and a classic page (%s resolution)',
    (resolution) => {
      expect(compile({ 'module-app.mts': MODULE_APP, 'classic-app.mts': CLASSIC_APP }, resolution)).toBe('');
    },
  );

  it('refuse a wrong call: the types are the bridge’s own', () => {
    const wrong = compile(
      {
        'module-app.mts': MODULE_APP.replace("app.kv.get('counter')", 'app.kv.get(42)'),
        'classic-app.mts': CLASSIC_APP.replace('window.marquee.ready()', 'window.marquee.readyy()'),
      },
      'bundler',
    );
    expect(wrong).toMatch(/module-app\.mts.*error TS2345/);
    expect(wrong).toMatch(/classic-app\.mts.*error TS2551/);
  });
});
