// Command line: pack a built static directory for upload.
//   node --import tsx sdk/pack/cli.ts <dir> -o app.tar.gz [--runtime | --runtime-file <file>] [--name <name>] [--json]
import fs from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { defaultRuntimeScript, packApplication, PackError } from './pack';

const USAGE = `usage: node --import tsx sdk/pack/cli.ts <dir> -o <archive.tar.gz> [options]

  -o, --output <file>      where to write the archive (required)
      --runtime            inject the app bridge (dist/sdk/marquee-app.js; run npm run build:sdk first)
      --runtime-file <js>  inject this bridge script instead
      --name <name>        application name, sent as Marquee-Application-Name
      --json               print the result as JSON
  -h, --help               show this help

The directory needs an index.html at its root. .marqueeignore (gitignore-like) leaves files out;
dot-paths, node_modules, source maps, keys and secrets are always left out.`;

async function main(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        output: { type: 'string', short: 'o' },
        runtime: { type: 'boolean', default: false },
        'runtime-file': { type: 'string' },
        name: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = args;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1 || !values.output) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  try {
    const runtimeFile = values['runtime-file'];
    const runtime = runtimeFile !== undefined || values.runtime ? await defaultRuntimeScript(runtimeFile) : undefined;
    const packed = await packApplication(positionals[0]!, { runtime, name: values.name });
    await fs.writeFile(values.output, packed.archive);
    if (values.json) {
      const result = {
        output: values.output,
        bytes: packed.archive.length,
        sha256: packed.sha256,
        expanded_bytes: packed.expandedBytes,
        file_count: packed.fileCount,
        headers: packed.headers,
        ignored: packed.ignored,
      };
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    } else {
      process.stdout.write(
        `packed ${packed.fileCount} files (${packed.expandedBytes} bytes) into ${values.output} (${packed.archive.length} bytes)\n` +
          (packed.ignored.length > 0 ? `left out: ${packed.ignored.join(', ')}\n` : '') +
          `\nupload headers:\n${Object.entries(packed.headers)
            .map(([k, v]) => `  ${k}: ${v}`)
            .join('\n')}\n`,
      );
    }
    return 0;
  } catch (error) {
    if (error instanceof PackError) {
      process.stderr.write(
        `cannot pack ${positionals[0]}:\n${error.problems.map((p) => `  ${p.code}: ${p.path ? `${p.path}: ` : ''}${p.detail}`).join('\n')}\n`,
      );
      return 1;
    }
    process.stderr.write(`${(error as Error).message}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
