// Applications: pack a built directory, upload it as a new application or a new release (with a
// progress bar, then a wait for the publishing operation), list, show, delete.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Application } from '../../contract/applications';
import { archiveSource, packDirectory, type PackChoices } from '../archive-file';
import { command, type CommandContext, type OptionSpec } from '../command';
import { fields, formatBytes, lines, table, type Block } from '../output';

/** How long an upload waits for its release to be published, unless --timeout says otherwise. */
const DEFAULT_WAIT_SECONDS = 120;

const PACK_OPTIONS: OptionSpec[] = [
  { flags: '--runtime', description: 'inject the app bridge (dist/sdk/marquee-app.js; npm run build:sdk first)' },
  { flags: '--runtime-file <js>', description: 'inject this bridge script instead' },
];
const UPLOAD_OPTIONS: OptionSpec[] = [
  ...PACK_OPTIONS,
  { flags: '--no-wait', description: 'return once the archive is accepted, without waiting for publication' },
  {
    flags: '--timeout <seconds>',
    description: `wait at most this long (default ${DEFAULT_WAIT_SECONDS})`,
    parse: 'positive-int',
  },
];

function packChoices(options: Record<string, unknown>): PackChoices {
  return {
    name: options.name as string | undefined,
    runtime: options.runtime === true,
    runtimeFile: options.runtimeFile as string | undefined,
  };
}

export interface UploadResult {
  application_id: string;
  release_id: string;
  operation_id: string;
  /** The operation's state when the command returned: `succeeded`, or still running with --no-wait. */
  operation_state: string;
  /** The application as it is after publication (null with --no-wait). */
  application: Application | null;
}

async function uploadArchive(ctx: CommandContext, target: string, applicationId: string | undefined) {
  const client = await ctx.client();
  const source = await archiveSource(target, packChoices(ctx.options), client);
  const progress = ctx.progress(applicationId ? `release of ${applicationId}` : 'upload');
  const call = { ...ctx.guarded(), applicationId, onProgress: progress.update };
  try {
    if (ctx.options.wait === false) {
      const accepted = (await client.applications.upload(source.upload, call)).data;
      return {
        application_id: accepted.id,
        release_id: accepted.release_id,
        operation_id: accepted.operation_id,
        operation_state: (await client.operations.get(accepted.operation_id)).data.state,
        application: null,
      } satisfies UploadResult;
    }
    const timeoutMs = ((ctx.options.timeout as number | undefined) ?? DEFAULT_WAIT_SECONDS) * 1000;
    const published = await client.applications.publish(source.upload, { ...call, wait: { timeoutMs } });
    return {
      application_id: published.data.id,
      release_id: published.releaseId,
      operation_id: published.operation.id,
      operation_state: published.operation.state,
      application: published.data,
    } satisfies UploadResult;
  } finally {
    progress.done();
  }
}

function applicationFields(app: Application): Block {
  return fields(
    ['id', app.id],
    ['name', app.name],
    ['state', app.state],
    ['revision', app.revision],
    ['latest ready release', app.latest_ready_release],
    ['created', app.created_at],
    ['updated', app.updated_at],
  );
}

const uploadHuman = (result: UploadResult): Block[] => [
  fields(
    ['application', result.application_id],
    ['release', result.release_id],
    ['operation', `${result.operation_id} (${result.operation_state})`],
    ...(result.application ? ([['name', result.application.name]] as [string, string][]) : []),
  ),
  ...(result.operation_state === 'succeeded'
    ? [lines(`place it on a page as {"type": "application", "release_id": "${result.release_id}"}`)]
    : []),
];

export const applicationCommands = [
  command({
    name: 'app pack',
    summary: 'pack a built static directory into the archive you upload (no server needed)',
    arguments: ['<dir>'],
    options: [
      { flags: '-o, --output <file>', description: 'where to write the .tar.gz' },
      { flags: '--name <name>', description: 'application name, sent when the archive is uploaded' },
      ...PACK_OPTIONS,
    ],
    local: true,
    async run(ctx) {
      const directory = ctx.args[0] as string;
      const output = (ctx.options.output as string | undefined) ?? `${path.basename(path.resolve(directory))}.tar.gz`;
      const packed = await packDirectory(directory, packChoices(ctx.options), undefined);
      // Written beside its destination and renamed, so an interrupted pack leaves no half archive.
      const temporary = `${output}.${crypto.randomBytes(4).toString('hex')}.tmp`;
      try {
        await fs.writeFile(temporary, packed.archive, { signal: ctx.signal });
        await fs.rename(temporary, output);
      } catch (error) {
        await fs.rm(temporary, { force: true });
        throw error;
      }
      return {
        output,
        bytes: packed.archive.length,
        sha256: packed.sha256,
        expanded_bytes: packed.expandedBytes,
        file_count: packed.fileCount,
        ignored: packed.ignored,
      };
    },
    human: (r) => [
      fields(
        ['archive', r.output],
        ['size', formatBytes(r.bytes)],
        ['files', `${r.file_count} (${formatBytes(r.expanded_bytes)} expanded)`],
        ['sha256', r.sha256],
        ['left out', r.ignored.length > 0 ? r.ignored.join(', ') : 'nothing'],
      ),
    ],
  }),
  command({
    name: 'app upload',
    summary: 'upload a directory (packed here) or a .tar.gz as a new application, and wait until it is published',
    arguments: ['<dir-or-archive>'],
    options: [{ flags: '--name <name>', description: 'application name' }, ...UPLOAD_OPTIONS],
    idempotencyKeyOption: true,
    run: (ctx) => uploadArchive(ctx, ctx.args[0] as string, undefined),
    human: uploadHuman,
    ids: (r) => [r.application_id, r.release_id],
  }),
  command({
    name: 'app release',
    summary: 'upload a new release of an application (its name stays)',
    arguments: ['<application-id>', '<dir-or-archive>'],
    options: UPLOAD_OPTIONS,
    ifMatch: true,
    idempotencyKeyOption: true,
    run: (ctx) => uploadArchive(ctx, ctx.args[1] as string, ctx.args[0] as string),
    human: uploadHuman,
    ids: (r) => [r.application_id, r.release_id],
  }),
  command({
    name: 'app list',
    summary: 'list applications',
    async run(ctx) {
      return (await (await ctx.client()).applications.list()).data;
    },
    human: (list) => [
      table(
        ['id', 'state', 'revision', 'latest ready release', 'name'],
        list.items.map((a) => [a.id, a.state, a.revision, a.latest_ready_release, a.name]),
        'no applications yet (marquee app upload <dir>)',
      ),
    ],
    ids: (list) => list.items.map((a) => a.id),
  }),
  command({
    name: 'app show',
    summary: 'show an application',
    arguments: ['<application-id>'],
    async run(ctx) {
      return (await (await ctx.client()).applications.get(ctx.args[0] as string)).data;
    },
    human: (app) => [applicationFields(app)],
    ids: (app) => [app.id],
  }),
  command({
    name: 'app delete',
    summary: 'delete an application and its releases (refused while a screen shows it)',
    arguments: ['<application-id>'],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx) {
      const id = ctx.args[0] as string;
      await (await ctx.client()).applications.delete(id, ctx.guarded());
      return { id, deleted: true };
    },
    human: (r) => [lines(`deleted ${r.id}`)],
    ids: (r) => [r.id],
  }),
];
