// `npm run operator -- <command>` on the server host: makes, lists and revokes operator bearers in
// the database the server's configuration names (MARQUEE_DATA_DIR, MARQUEE_DATABASE_URL). A new
// bearer is printed once and never again: only its hash is stored.
import { pathToFileURL } from 'node:url';
import { systemClock } from '../clock';
import { ConfigError, loadConfig } from '../config';
import { openStore } from '../store/store';
import { createOperator, listOperators, revokeOperator } from './operators';

const USAGE = `usage: npm run operator -- create --name <name>
       npm run operator -- list
       npm run operator -- revoke <opr_id>
(reads MARQUEE_DATA_DIR / MARQUEE_DATABASE_URL like npm start)`;

export async function runOperatorCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
): Promise<number> {
  const [command, ...rest] = args;
  if (command !== 'create' && command !== 'list' && command !== 'revoke') {
    print(USAGE);
    return 2;
  }
  let config;
  try {
    config = loadConfig(env, []);
  } catch (error) {
    if (error instanceof ConfigError) {
      print(`marquee operator: ${error.message}`);
      return 2;
    }
    throw error;
  }
  const store = await openStore(config.databaseUrl, { sqliteSync: config.sqliteSync });
  try {
    await store.migrate();
    if (command === 'create') {
      const at = rest.indexOf('--name');
      const name = at >= 0 ? rest[at + 1]?.trim() : undefined;
      if (!name || name.length > 80) {
        print(USAGE);
        return 2;
      }
      const { id, token } = await createOperator(store, name, systemClock.now());
      print(`Operator ${id} (${name}) created. Its bearer, shown once; keep it secret:`);
      print(token);
      return 0;
    }
    if (command === 'list') {
      for (const o of await listOperators(store))
        print(
          `${o.id}\t${o.name}\t${new Date(o.created_at).toISOString()}\t${o.revoked_at === null ? 'active' : 'revoked'}`,
        );
      return 0;
    }
    const id = rest[0];
    if (!id) {
      print(USAGE);
      return 2;
    }
    if (!(await revokeOperator(store, id, systemClock.now()))) {
      print(`no active operator ${id}`);
      return 1;
    }
    print(`Operator ${id} revoked.`);
    return 0;
  } finally {
    await store.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runOperatorCommand(process.argv.slice(2), process.env, (line) => console.log(line)).then(
    (code) => process.exit(code),
    (error) => {
      console.error('marquee operator:', error);
      process.exit(1);
    },
  );
}
