// Tells in-process caches that rows they derive from changed: a Kysely plugin that looks at every
// UPDATE and DELETE this store runs (through the query builder) and calls the watchers of its
// table, when it sets one of the columns a watcher names. It runs as the statement is sent, not at
// commit: on SQLite (one connection, transactions serialized) no other read can see the old rows
// in between; on PostgreSQL a read racing the commit may cache them again, which the caches bound
// by their lifetime. Writes it cannot see: raw SQL text and a statement compiled by hand and
// executed many times (it is inspected when compiled); write such a statement with the query
// builder, or compile it with compiledOnce (compiled-once.ts), which shows it the plugins at each run.
import {
  AliasNode,
  ColumnNode,
  TableNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

interface Watcher {
  table: string;
  /** Undefined: any update or delete of the table; else an update that sets one of these (or any delete). */
  columns: ReadonlySet<string> | undefined;
  changed: () => void;
}

export class WriteWatch implements KyselyPlugin {
  /** By table: a statement on a table nobody watches costs a kind check and a lookup. */
  private readonly watchers = new Map<string, Watcher[]>();

  watch(table: string, columns: readonly string[] | undefined, changed: () => void): void {
    const watchers = this.watchers.get(table) ?? [];
    watchers.push({ table, columns: columns && new Set(columns), changed });
    this.watchers.set(table, watchers);
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.watchers.size > 0) this.inspect(args.node);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  private inspect(node: RootOperationNode): void {
    if (node.kind === 'UpdateQueryNode') {
      const watchers = this.watchers.get(tableName(node.table) ?? '');
      if (!watchers) return;
      const set = (node.updates ?? []).map((u) => columnName(u.column));
      for (const w of watchers) if (!w.columns || set.some((c) => c === undefined || w.columns!.has(c))) w.changed();
    } else if (node.kind === 'DeleteQueryNode') {
      for (const from of node.from.froms) for (const w of this.watchers.get(tableName(from) ?? '') ?? []) w.changed();
    }
  }
}

function tableName(node: OperationNode | undefined): string | undefined {
  if (node && TableNode.is(node)) return node.table.identifier.name;
  if (node && AliasNode.is(node)) return tableName(node.node);
  return undefined;
}

function columnName(node: OperationNode): string | undefined {
  return ColumnNode.is(node) ? node.column.name : undefined;
}
