import { describe, expect, it } from 'vitest';
import { fetchMetadataConflict } from './fetch-metadata';

describe('Fetch Metadata on release hosts', () => {
  it('accepts what a framed release does: a frame navigation, then its own subresources', () => {
    expect(
      fetchMetadataConflict({ site: 'cross-site', mode: 'navigate', dest: 'iframe' }, { ticket: true }),
    ).toBeUndefined();
    expect(
      fetchMetadataConflict({ site: 'same-site', mode: 'navigate', dest: 'iframe' }, { ticket: false }),
    ).toBeUndefined();
    expect(
      fetchMetadataConflict({ site: 'same-origin', mode: 'cors', dest: 'empty' }, { ticket: false }),
    ).toBeUndefined();
    expect(
      fetchMetadataConflict({ site: 'same-origin', mode: 'no-cors', dest: 'image' }, { ticket: false }),
    ).toBeUndefined();
  });

  it('accepts requests without Fetch Metadata (native clients)', () => {
    expect(fetchMetadataConflict({}, { ticket: true })).toBeUndefined();
    expect(fetchMetadataConflict({}, { ticket: false })).toBeUndefined();
  });

  it('refuses metadata that contradicts itself', () => {
    expect(fetchMetadataConflict({ mode: 'navigate', dest: 'script' }, { ticket: false })).toMatch(/disagree/);
    expect(fetchMetadataConflict({ mode: 'no-cors', dest: 'iframe' }, { ticket: false })).toMatch(/disagree/);
    expect(fetchMetadataConflict({ site: 'elsewhere' }, { ticket: false })).toMatch(/unknown value/);
  });

  it('spends a ticket only on a navigation', () => {
    expect(fetchMetadataConflict({ site: 'cross-site', mode: 'no-cors', dest: 'script' }, { ticket: true })).toMatch(
      /navigating a frame/,
    );
    expect(fetchMetadataConflict({ site: 'cross-site', mode: 'cors', dest: 'empty' }, { ticket: true })).toMatch(
      /navigating a frame/,
    );
  });

  it('lets no other origin load the release files with its grant', () => {
    expect(fetchMetadataConflict({ site: 'cross-site', mode: 'no-cors', dest: 'script' }, { ticket: false })).toMatch(
      /only pages of this release/,
    );
    expect(fetchMetadataConflict({ site: 'same-site', mode: 'cors', dest: 'empty' }, { ticket: false })).toMatch(
      /only pages of this release/,
    );
  });
});
