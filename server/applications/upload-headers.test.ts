import { describe, expect, it } from 'vitest';
import { applicationNameHeader } from '../../sdk/contract/applications';
import { ProblemError } from '../problem';
import { checkArchiveBody, parseUploadHeaders, type DistinctHeaders } from './upload-headers';

const SHA = 'a'.repeat(64);

function headers(extra: Record<string, string | string[] | undefined> = {}): DistinctHeaders {
  const base: Record<string, string | string[] | undefined> = {
    'marquee-archive-sha256': SHA,
    'marquee-expanded-bytes': '1000',
    'marquee-file-count': '3',
    ...extra,
  };
  const out: DistinctHeaders = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) out[k] = Array.isArray(v) ? v : [v];
  return out;
}

/** The invalid_request problem a header set gets, as {field, detail}. */
function refusal(h: DistinctHeaders): { field: string; code: string; detail: string } {
  try {
    parseUploadHeaders(h);
  } catch (error) {
    expect(error).toBeInstanceOf(ProblemError);
    const p = error as ProblemError;
    expect(p.code).toBe('invalid_request');
    return { ...p.options.errors![0]!, detail: p.detail };
  }
  throw new Error('headers were accepted');
}

describe('upload header rules', () => {
  it('reads the declaration, SDK version and no name', () => {
    expect(parseUploadHeaders(headers({ 'marquee-sdk-version': '1' }))).toEqual({
      declaration: { sha256: SHA, expandedBytes: 1000, fileCount: 3 },
      sdkVersion: '1',
    });
  });

  it.each([
    ['marquee-archive-sha256', 'Marquee-Archive-SHA256'],
    ['marquee-expanded-bytes', 'Marquee-Expanded-Bytes'],
    ['marquee-file-count', 'Marquee-File-Count'],
  ])('requires %s and names it', (name, field) => {
    expect(refusal(headers({ [name]: undefined }))).toMatchObject({ field, code: 'required' });
  });

  it.each(['A'.repeat(64), 'a'.repeat(63), 'a'.repeat(65), `${'a'.repeat(63)}g`])('refuses the SHA-256 %s', (sha) => {
    expect(refusal(headers({ 'marquee-archive-sha256': sha })).field).toBe('Marquee-Archive-SHA256');
  });

  it('accepts expanded bytes and file counts at their bounds', () => {
    const low = parseUploadHeaders(headers({ 'marquee-expanded-bytes': '1', 'marquee-file-count': '1' }));
    expect(low.declaration).toMatchObject({ expandedBytes: 1, fileCount: 1 });
    const high = parseUploadHeaders(headers({ 'marquee-expanded-bytes': '262144000', 'marquee-file-count': '5000' }));
    expect(high.declaration).toMatchObject({ expandedBytes: 262144000, fileCount: 5000 });
  });

  it.each(['0', '262144001', '-1', '1e3', '12.0', '', 'ten', '99999999999999999999'])(
    'refuses Marquee-Expanded-Bytes %j',
    (value) => {
      expect(refusal(headers({ 'marquee-expanded-bytes': value })).detail).toMatch(
        /^Marquee-Expanded-Bytes: must be an integer from 1 to 262144000/,
      );
    },
  );

  it.each(['0', '5001', '+3'])('refuses Marquee-File-Count %j', (value) => {
    expect(refusal(headers({ 'marquee-file-count': value })).field).toBe('Marquee-File-Count');
  });

  it('refuses a repeated header', () => {
    expect(refusal(headers({ 'marquee-file-count': ['3', '3'] }))).toMatchObject({
      field: 'Marquee-File-Count',
      code: 'repeated',
    });
    expect(refusal(headers({ 'marquee-archive-sha256': [SHA, SHA] })).code).toBe('repeated');
  });

  it('bounds Marquee-SDK-Version to 64 printable characters', () => {
    expect(parseUploadHeaders(headers({ 'marquee-sdk-version': 'v'.repeat(64) })).sdkVersion).toHaveLength(64);
    expect(refusal(headers({ 'marquee-sdk-version': 'v'.repeat(65) })).field).toBe('Marquee-SDK-Version');
    expect(refusal(headers({ 'marquee-sdk-version': '1\t2' })).field).toBe('Marquee-SDK-Version');
    expect(refusal(headers({ 'marquee-sdk-version': '' })).field).toBe('Marquee-SDK-Version');
  });

  describe('Marquee-Application-Name', () => {
    it('is trimmed ASCII of at most 120 characters', () => {
      expect(parseUploadHeaders(headers({ 'marquee-application-name': '  Lobby board ' })).name).toEqual({
        value: 'Lobby board',
        header: 'Marquee-Application-Name',
      });
      expect(parseUploadHeaders(headers({ 'marquee-application-name': 'n'.repeat(120) })).name?.value).toHaveLength(
        120,
      );
      expect(refusal(headers({ 'marquee-application-name': 'n'.repeat(121) })).code).toBe('too_long');
    });

    it('refuses controls, non-ASCII bytes, empty names and repeats', () => {
      expect(refusal(headers({ 'marquee-application-name': 'a\tb' })).detail).toMatch(/control characters/);
      // Node passes header bytes as Latin-1: é arrives as \xe9.
      expect(refusal(headers({ 'marquee-application-name': 'Caf\u00e9' })).detail).toMatch(
        /must be ASCII.*Marquee-Application-Name\*/,
      );
      expect(refusal(headers({ 'marquee-application-name': '   ' })).detail).toMatch(/must not be empty/);
      expect(refusal(headers({ 'marquee-application-name': ['a', 'b'] })).code).toBe('repeated');
    });
  });

  describe('Marquee-Application-Name* (RFC 8187)', () => {
    const ext = (value: string | string[]) => headers({ 'marquee-application-name*': value });

    it('decodes UTF-8 percent-encoding, charset case-insensitively', () => {
      expect(parseUploadHeaders(ext("UTF-8''Caf%C3%A9%20menu%20%E2%82%AC")).name).toEqual({
        value: 'Café menu €',
        header: 'Marquee-Application-Name*',
      });
      expect(parseUploadHeaders(ext("utf-8''Lobby")).name?.value).toBe('Lobby');
    });

    it('counts Unicode scalar values, not bytes or UTF-16 units', () => {
      const emoji = '%F0%9F%93%BA'; // 📺, two UTF-16 units, four bytes
      expect([...parseUploadHeaders(ext(`UTF-8''${emoji.repeat(120)}`)).name!.value]).toHaveLength(120);
      expect(refusal(ext(`UTF-8''${emoji.repeat(121)}`)).code).toBe('too_long');
    });

    it.each([
      ["ISO-8859-1''Caf%E9", /UTF-8''/],
      ["UTF-8'en'Lobby", /UTF-8''/],
      ['Lobby', /UTF-8''/],
      ["UTF-8''Caf%zz", /invalid percent-encoding/],
      ["UTF-8''Caf%C", /invalid percent-encoding/],
      ["UTF-8''two words", /invalid percent-encoding/],
      ["UTF-8''%C3%28", /does not decode as UTF-8/],
      ["UTF-8''%ED%A0%80", /does not decode as UTF-8/],
      ["UTF-8''bell%07", /control characters/],
      ["UTF-8''nul%00", /control characters/],
      ["UTF-8''%20%20", /must not be empty/],
    ])('refuses %j', (value, detail) => {
      const got = refusal(ext(value));
      expect(got.field).toBe('Marquee-Application-Name*');
      expect(got.detail).toMatch(detail);
    });

    it('refuses duplicates and the plain header beside it', () => {
      expect(refusal(ext(["UTF-8''a", "UTF-8''b"])).code).toBe('repeated');
      const both = headers({ 'marquee-application-name': 'a', 'marquee-application-name*': "UTF-8''a" });
      expect(refusal(both)).toMatchObject({ code: 'conflict', detail: expect.stringMatching(/not both/) });
    });

    it('round-trips the SDK helper for any name', () => {
      for (const name of ['Lobby', 'Café menu', '東京 ロビー', 'a+b/c%d']) {
        const sent = applicationNameHeader(name);
        const distinct = headers(Object.fromEntries(Object.entries(sent).map(([k, v]) => [k.toLowerCase(), v])));
        expect(parseUploadHeaders(distinct).name?.value).toBe(name);
      }
    });
  });

  describe('body headers', () => {
    const body = (type: string | undefined, length?: string): DistinctHeaders => ({
      ...(type === undefined ? {} : { 'content-type': [type] }),
      ...(length === undefined ? {} : { 'content-length': [length] }),
    });

    it('wants application/gzip', () => {
      expect(() => checkArchiveBody(body('application/gzip; foo=bar', '10'))).not.toThrow();
      expect(() => checkArchiveBody(body('application/json'))).toThrow(
        /Content-Type: send the archive raw as application\/gzip/,
      );
      expect(() => checkArchiveBody(body(undefined))).toThrow(/Content-Type/);
    });

    it('refuses a declared Content-Length over 100 MiB before reading', () => {
      expect(() => checkArchiveBody(body('application/gzip', '104857600'))).not.toThrow();
      expect(() => checkArchiveBody(body('application/gzip', '104857601'))).toThrow(
        /Content-Length: the archive may be at most 104857600 bytes/,
      );
    });
  });
});
