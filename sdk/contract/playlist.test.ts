import { describe, expect, it } from 'vitest';
import { iframeSrcProblem, iframeSrcServiceProblem, isNonPublicAddress, serviceHostsOf } from './iframe-src';
import { PlaylistWrite, PlaylistWriteV2, playlistJsonSchemas } from './playlist';

const canvas = { width: 1920, height: 1080, background: '#000000FF' };
const rect = { x: 0, y: 0, width: 1920, height: 1080 };
const page = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  canvas,
  transition: { type: 'crossfade', duration_ms: 200 },
  advance: { mode: 'duration', after_ms: 8000 },
  placements: [
    {
      id: 'hero',
      content: { type: 'image', selector: { by: 'id', media_id: 'med_a' } },
      rect,
      layer: 0,
      content_fit: 'cover',
    },
  ],
  ...extra,
});

describe('iframe sources', () => {
  it.each([
    'https://example.com/ticker',
    'https://EXAMPLE.com:8443/a?b=c#d',
    'https://8.8.8.8/',
    'https://[2606:4700:4700::1111]/',
    'https://localhost.example.com/',
    'https://local.example.com/',
  ])('accepts %s', (src) => expect(iframeSrcProblem(src)).toBeUndefined());

  it.each([
    ['http://example.com/', 'https'],
    ['//example.com/', 'https'],
    ['javascript:alert(1)', 'https'],
    ['https://user:pw@example.com/', 'credentials'],
    ['https://user@example.com/', 'credentials'],
    ['https://localhost/', 'localhost'],
    ['https://LOCALHOST./', 'localhost'],
    ['https://app.localhost/', 'localhost'],
    ['https://printer.local/', '.local'],
    ['https://10.1.2.3/', 'private'],
    ['https://172.16.0.1/', 'private'],
    ['https://172.31.255.255/', 'private'],
    ['https://192.168.0.10/', 'private'],
    ['https://127.0.0.1/', 'loopback'],
    ['https://2130706433/', 'loopback'], // the URL parser reads this as 127.0.0.1
    ['https://0x7f.1/', 'loopback'],
    ['https://169.254.169.254/latest/meta-data', 'link-local'],
    ['https://100.64.0.1/', 'private'],
    ['https://0.0.0.0/', 'private'],
    ['https://[::1]/', 'loopback'],
    ['https://[::]/', 'private'],
    ['https://[fe80::1]/', 'link-local'],
    ['https://[fd00::1]/', 'private'],
    ['https://[::ffff:127.0.0.1]/', 'loopback'],
    ['https://[::ffff:10.0.0.1]/', 'private'],
    [`https://example.com/${'x'.repeat(2048)}`, 'at most'],
  ])('refuses %s', (src, why) => {
    const problem = iframeSrcProblem(src);
    expect(problem).toBeDefined();
    expect(problem!.toLowerCase()).toContain(
      why === 'loopback' || why === 'link-local' ? 'private' : why.toLowerCase(),
    );
  });

  it("knows the service's own hosts: its origins and what the release template can name", () => {
    const service = serviceHostsOf({
      control: 'https://api.signage.example',
      play: 'https://Play.Signage.example:8443',
      dashboard: 'https://dash.signage.example',
      releaseTemplate: 'https://{label}.rel.signage.example',
    });
    expect(service).toEqual({
      hosts: ['api.signage.example', 'play.signage.example', 'dash.signage.example'],
      releaseDomain: 'rel.signage.example',
    });
    for (const src of [
      'https://play.signage.example/',
      'https://play.signage.example:443/s/x',
      'https://API.signage.example/',
      'https://dash.signage.example./',
      'https://abc.rel.signage.example/',
    ]) {
      expect(iframeSrcServiceProblem(src, service), src).toBeDefined();
    }
    for (const src of [
      'https://signage.example/',
      'https://rel.signage.example/',
      'https://a.b.rel.signage.example/',
      'https://play.signage.example.net/',
      'https://www.example.com/',
    ]) {
      expect(iframeSrcServiceProblem(src, service), src).toBeUndefined();
    }
  });

  it('classifies resolved addresses (as DNS returns them) too', () => {
    expect(isNonPublicAddress('192.168.1.1')).toBe(true);
    expect(isNonPublicAddress('fe80::1')).toBe(true);
    expect(isNonPublicAddress('::ffff:7f00:1')).toBe(true);
    expect(isNonPublicAddress('93.184.216.34')).toBe(false);
    expect(isNonPublicAddress('2606:2800:220:1:248:1893:25c8:1946')).toBe(false);
    expect(isNonPublicAddress('example.com')).toBe(false);
  });
});

describe('playlist write schemas', () => {
  it('applies the documented defaults', () => {
    const doc = PlaylistWrite.parse({
      name: 'Defaults',
      pages: [
        page('a', {
          placements: [
            {
              id: 'v',
              content: { type: 'video', selector: { by: 'tag', tag: 'lobby', one_at_a_time: true } },
              rect,
              layer: 0,
              content_fit: 'contain',
            },
          ],
        }),
      ],
    });
    expect(doc.pages[0]!.canvas.viewport_fit).toBe('contain');
    expect(doc.pages[0]!.placements[0]!.content).toMatchObject({ muted: true, loop: false });
  });

  it('names unknown members, including response-only ones', () => {
    const result = PlaylistWrite.safeParse({ name: 'x', pages: [page('a', { comments: {} })], revision: 3 });
    expect(result.success).toBe(false);
    const unknown = result.error!.issues.filter((i) => i.code === 'unrecognized_keys');
    expect(unknown.flatMap((i) => (i as { keys: string[] }).keys).sort()).toEqual(['comments', 'revision']);
  });

  it('keeps adslot pages out of v1 and lets v2 have them', () => {
    const adslot = {
      type: 'adslot',
      id: 'ad',
      slot: { key: 'break', duration_ms: 15000 },
      transition: { type: 'crossfade', duration_ms: 0 },
      fallback: { canvas, advance: { mode: 'duration', after_ms: 5000 }, placements: page('x').placements },
    };
    expect(PlaylistWrite.safeParse({ name: 'x', pages: [page('a'), adslot] }).success).toBe(false);
    expect(PlaylistWriteV2.safeParse({ name: 'x', pages: [page('a'), adslot] }).success).toBe(true);
    expect(PlaylistWriteV2.safeParse({ name: 'x', pages: [{ ...page('a'), type: 'page' }, adslot] }).success).toBe(
      true,
    );
  });

  it('exports JSON Schema from the same definitions', () => {
    const { PlaylistWrite: v1, PlaylistWriteV2: v2 } = playlistJsonSchemas() as {
      PlaylistWrite: any;
      PlaylistWriteV2: any;
    };
    expect(v1.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(v1.additionalProperties).toBe(false);
    expect(v1.required).toEqual(['name', 'pages']);
    expect(v1.properties.pages).toMatchObject({ minItems: 1, maxItems: 100 });
    const pageSchema = v1.properties.pages.items;
    expect(pageSchema.properties.placements).toMatchObject({ minItems: 1, maxItems: 24 });
    expect(pageSchema.properties.transition.properties.duration_ms).toMatchObject({ minimum: 0, maximum: 60000 });
    // Defaults belong to the input: an omitted viewport_fit is allowed.
    expect(pageSchema.properties.canvas.required).not.toContain('viewport_fit');
    expect(JSON.stringify(v2)).toContain('"adslot"');
    expect(JSON.stringify(v1)).not.toContain('"adslot"');
  });
});
