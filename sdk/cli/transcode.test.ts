import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliFailure } from './exit-codes';
import { checkMediaFile, findOnPath, transcodePlan } from './transcode';

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

  it('asks for --kind only when the extension is unknown; audio it cannot convert is named as audio', () => {
    expect(() => transcodePlan('capture.raw', 'auto', undefined)).toThrow(/pass --kind image or --kind video/);
    expect(() => transcodePlan('song.wav', 'auto', undefined)).toThrow(/song\.wav is audio .*convert it to MP3/);
  });

  it('refuses a file that is text, or empty, as no media at all, whatever its name', () => {
    const text = new TextEncoder().encode('# Lobby screens\n\nWhat plays where: ünïcode too.\n');
    expect(() => checkMediaFile('docs/README.md', text)).toThrow(
      /: README\.md is not an image, video or audio file Marquee plays$/,
    );
    expect(() => checkMediaFile('notes.png', text)).toThrow(/not an image, video or audio file/);
    expect(() => checkMediaFile('empty.mp4', new Uint8Array())).toThrow(/empty\.mp4 is empty/);
    // A multi-byte character cut by the end of the head is still text.
    expect(() => checkMediaFile('cut.txt', new TextEncoder().encode('ab€').subarray(0, 3))).toThrow(/not an image/);
  });

  it('lets binary files through: media headers have NUL bytes or are not UTF-8', () => {
    const pngHead = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]);
    expect(() => checkMediaFile('a.png', pngHead)).not.toThrow();
    const jpegHead = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0x10, 0x4a, 0x46, 0x49, 0x46]);
    expect(() => checkMediaFile('a.jpg', jpegHead)).not.toThrow();
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
