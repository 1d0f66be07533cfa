import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config';
import { parseS3BlobUrl } from './s3-location';

describe('MARQUEE_BLOB_URL', () => {
  it('names a bucket, a key prefix and the endpoint, region and addressing to reach it', () => {
    expect(
      parseS3BlobUrl(
        's3://marquee-media/prod/blobs/?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=eu-west-1&force_path_style=true',
      ),
    ).toEqual({
      bucket: 'marquee-media',
      prefix: 'prod/blobs',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
    });
    expect(parseS3BlobUrl('s3://marquee-media')).toEqual({
      bucket: 'marquee-media',
      prefix: '',
      endpoint: undefined,
      region: undefined,
      forcePathStyle: false,
    });
  });

  it('refuses what it cannot use, at start-up, with the reason', () => {
    for (const [url, reason] of [
      ['https://marquee-media/x', /must be s3:\/\//],
      ['s3://Bad_Bucket/x', /must be s3:\/\//],
      ['s3://key:secret@bucket/x', /must be s3:\/\//],
      ['s3://bucket/../x', /invalid blob key/],
      ['s3://bucket/x?endpiont=http://h', /unknown parameter endpiont/],
      ['s3://bucket/x?endpoint=ftp://h', /endpoint must be an origin/],
      ['s3://bucket/x?force_path_style=yes', /force_path_style/],
    ] as const) {
      expect(() => parseS3BlobUrl(url), url).toThrow(reason);
      expect(() => loadConfig({ MARQUEE_BLOB_URL: url }), url).toThrow(ConfigError);
    }
    expect(loadConfig({ MARQUEE_BLOB_URL: 's3://bucket/p' }).blobUrl).toBe('s3://bucket/p');
    expect(loadConfig({}).blobUrl).toBeUndefined();
  });
});
