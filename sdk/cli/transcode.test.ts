import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliFailure } from './exit-codes';
import { findOnPath, transcodePlan } from './transcode';

describe('when a media file goes through ffmpeg', () => {
  it('auto: only formats the server does not take, as the kind the extension says', () => {
    expect(transcodePlan('a.png', 'auto', undefined)).toEqual({ transcode: false });
    expect(transcodePlan('a.MOV', 'auto', undefined)).toEqual({ transcode: true, kind: 'video' });
    expect(transcodePlan('a.heic', 'auto', undefined)).toEqual({ transcode: true, kind: 'image' });
    expect(transcodePlan('a.mp4', 'always', undefined)).toEqual({ transcode: true, kind: 'video' });
    expect(transcodePlan('a.mov', 'never', undefined)).toEqual({ transcode: false });
    expect(transcodePlan('a.xyz', 'auto', 'video')).toEqual({ transcode: true, kind: 'video' });
    expect(() => transcodePlan('a.xyz', 'auto', undefined)).toThrow(CliFailure);
  });

  it('finds an executable on the PATH, and nothing that is not one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marquee-path-'));
    fs.writeFileSync(path.join(dir, 'ffmpeg'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'ffprobe'), 'not executable', { mode: 0o644 });
    expect(await findOnPath('ffmpeg', { PATH: `/nonexistent${path.delimiter}${dir}` })).toBe(path.join(dir, 'ffmpeg'));
    expect(await findOnPath('ffprobe', { PATH: dir })).toBeUndefined();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
