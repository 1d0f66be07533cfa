// An application to upload, from a directory (packed here with sdk/pack) or from a .tar.gz that
// `marquee app pack` (or anything else) wrote: the upload headers need the archive's SHA-256, its
// regular files' count and their expanded size, read here in one streaming pass.
import { createHash } from 'node:crypto';
import { createReadStream, openAsBlob } from 'node:fs';
import fs from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import type { ArchiveUpload, MarqueeClient } from '../client/marquee-client';
import {
  DEFAULT_RUNTIME_FILE,
  defaultRuntimeScript,
  packApplication,
  packLimitsFromCapabilities,
  PackError,
} from '../pack/pack';
import { invalidInput } from './exit-codes';

export interface ArchiveSource {
  upload: ArchiveUpload;
  bytes: number;
  /** Files the packer left out (directories only). */
  ignored: string[];
}

export interface PackChoices {
  name?: string;
  runtime?: boolean;
  runtimeFile?: string;
}

/** The bridge script to inject, when asked for; a clear error when it has not been built. */
export async function runtimeScript(choices: PackChoices): Promise<Uint8Array | undefined> {
  if (!choices.runtime && choices.runtimeFile === undefined) return undefined;
  try {
    return await defaultRuntimeScript(choices.runtimeFile);
  } catch {
    const file = choices.runtimeFile ?? DEFAULT_RUNTIME_FILE;
    throw invalidInput(`cannot read the bridge script ${file}`, {
      hint: choices.runtimeFile ? undefined : 'build it first: npm run build:sdk',
    });
  }
}

/** Packs a directory with the limits the server announces; a pack problem lists every rule broken. */
export async function packDirectory(
  directory: string,
  choices: PackChoices,
  client: MarqueeClient | undefined,
): Promise<Awaited<ReturnType<typeof packApplication>>> {
  const limits = client ? packLimitsFromCapabilities((await client.status.capabilities()).data) : undefined;
  try {
    return await packApplication(directory, { name: choices.name, runtime: await runtimeScript(choices), limits });
  } catch (error) {
    if (!(error instanceof PackError)) throw error;
    throw invalidInput(`cannot pack ${directory}`, {
      errors: error.problems.map((p) => ({ field: p.path ?? directory, code: p.code, detail: p.detail })),
    });
  }
}

/** Counts the regular files of a gzipped tar and their sizes, hashing the gzip bytes as they go. */
export async function archiveFacts(
  file: string,
): Promise<{ sha256: string; fileCount: number; expandedBytes: number }> {
  const hash = createHash('sha256');
  const extract = tar.extract();
  let fileCount = 0;
  let expandedBytes = 0;
  extract.on('entry', (header, stream, next) => {
    if (header.type === 'file' || header.type === 'contiguous-file') {
      fileCount++;
      expandedBytes += header.size ?? 0;
    }
    stream.on('end', next);
    stream.resume();
  });
  const source = createReadStream(file);
  source.on('data', (chunk) => hash.update(chunk));
  try {
    await pipeline(source, zlib.createGunzip(), extract);
  } catch (error) {
    throw invalidInput(`${file} is not a gzipped tar archive: ${(error as Error).message}`);
  }
  return { sha256: hash.digest('hex'), fileCount, expandedBytes };
}

/** A directory packed, or an archive file read as a lazy Blob (never held whole in memory). */
export async function archiveSource(
  target: string,
  choices: PackChoices,
  client: MarqueeClient,
): Promise<ArchiveSource> {
  let info;
  try {
    info = await fs.stat(target);
  } catch {
    throw invalidInput(`${target} does not exist`);
  }
  if (info.isDirectory()) {
    const packed = await packDirectory(target, choices, client);
    return { upload: packed, bytes: packed.archive.length, ignored: packed.ignored };
  }
  if (choices.runtime || choices.runtimeFile !== undefined)
    throw invalidInput('--runtime and --runtime-file apply to a directory; an archive is uploaded as it is');
  const facts = await archiveFacts(target);
  const archive = await openAsBlob(target, { type: 'application/gzip' });
  return {
    upload: { archive, ...facts, name: choices.name, sdkVersion: undefined },
    bytes: info.size,
    ignored: [],
  };
}
