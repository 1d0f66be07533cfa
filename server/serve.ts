// What `npm start` does, given its environment and arguments: load configuration, serve every plane,
// print where, drain on signals. server/main.ts calls it; a test entry may pass services of its own.
import path from 'node:path';
import { createServer, type MarqueeServer } from './app';
import { asksForHelp, type Config, ConfigError, describeConfig, loadConfig, usage } from './config';
import type { ServiceOptions } from './default-services';

/**
 * What `npm start` prints when the start fails. A refused setting or a system error (a port in use,
 * a directory it may not write) is its message; anything else is a defect, and its stack says where.
 */
export function startFailure(error: unknown): string {
  const expected =
    error instanceof ConfigError ||
    (error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string');
  const said = error instanceof Error ? error.message : String(error);
  const stack = !expected && error instanceof Error && error.stack ? `\n${error.stack}` : '';
  return `marquee: could not start: ${said}${stack}`;
}

/**
 * What `npm start` prints once it listens: where each plane answers (the player is on the play
 * origin, with the runtime plane), then every setting with secrets masked. `port` is the one bound.
 */
export function startBanner(config: Config, port: number): string {
  const origin = (o: string) => o.replace(`:${config.port}`, `:${port}`);
  const control = origin(config.controlOrigin);
  const play = origin(config.playOrigin);
  return [
    `Marquee is running (data in ${path.resolve(config.dataDir)})`,
    ...(control === play
      ? [`  control plane + player  ${control}`]
      : [`  control plane           ${control}`, `  player                  ${play}`]),
    `  runtime plane           ${play}/runtime/v1`,
    `  release hosts           ${origin(config.releaseOrigin)}`,
    `  dashboard               ${origin(config.dashboardOrigin)}`,
    `  settings: ${describeConfig(config).join(' ')}`,
  ].join('\n');
}

export async function serve(
  env: NodeJS.ProcessEnv,
  argv: string[],
  replaced: Omit<ServiceOptions, 'config'> = {},
): Promise<MarqueeServer> {
  if (asksForHelp(argv)) {
    console.log(usage());
    process.exit(0);
  }
  let config;
  try {
    config = loadConfig(env, argv);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`marquee: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const server = await createServer({ ...replaced, config });
  const port = await server.listen();
  console.log(startBanner(config, port));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`marquee: ${signal} received; draining`);
    server.stop().then(
      () => process.exit(0),
      (error) => {
        console.error('marquee: shutdown failed', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  return server;
}
