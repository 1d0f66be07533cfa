// Counts the statements Kysely runs through a database it is plugged into (tests of set-based work:
// "one statement per table"). Each entry is the query kind and the table it names first.
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

export class StatementLog implements KyselyPlugin {
  readonly statements: string[] = [];

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node as RootOperationNode & { from?: unknown; table?: unknown; into?: unknown };
    const table = JSON.stringify(node.from ?? node.table ?? node.into ?? null).match(/"name":"([a-z_]+)"/)?.[1];
    this.statements.push(`${node.kind.replace(/QueryNode$/, '')} ${table ?? '?'}`);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  /** Statements per "Kind table", e.g. { 'Update screens': 1, 'Insert events': 1 }. */
  counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const s of this.statements) counts[s] = (counts[s] ?? 0) + 1;
    return counts;
  }

  clear(): void {
    this.statements.length = 0;
  }
}
