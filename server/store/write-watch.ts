// Tells in-process caches that rows they derive from changed: a Kysely plugin that looks at every
// UPDATE and DELETE this store runs (through the query builder) and calls the watchers of its
// table, when it sets one of the columns a watcher names. It runs as the statement is sent, not at
// commit: on SQLite (one connection, transactions serialized) no other read can see the old rows
// in between; on PostgreSQL a read racing the commit may find them, which WatchedCache keeps only
// for WRITE_SETTLE_MS. Writes that reach a watcher are also handed to the relay, which tells the
// other replicas (D-386); their writes come back through replay. Writes it cannot see: raw SQL
// text and a statement compiled by hand and executed many times (it is inspected when compiled);
// write such a statement with the query builder, or compile it with compiledOnce
// (compiled-once.ts), which shows it the plugins at each run.
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

/** A watched write: its table, and the columns it set (undefined: a delete; an undefined column: one not named). */
export type WatchedWriteRelay = (table: string, columns: readonly (string | undefined)[] | undefined) => void;

export class WriteWatch implements KyselyPlugin {
  /** By table: a statement on a table nobody watches costs a kind check and a lookup. */
  private readonly watchers = new Map<string, Watcher[]>();
  private relay: WatchedWriteRelay | undefined;

  watch(table: string, columns: readonly string[] | undefined, changed: () => void): void {
    const watchers = this.watchers.get(table) ?? [];
    watchers.push({ table, columns: columns && new Set(columns), changed });
    this.watchers.set(table, watchers);
  }

  /** Hands every write that reached a watcher to `relay` too (replicas tell each other of them). */
  relayTo(relay: WatchedWriteRelay): void {
    this.relay = relay;
  }

  /** A write another process made: calls the watchers it reaches, as if it ran here (not relayed again). */
  replay(table: string, columns: readonly (string | undefined)[] | undefined): void {
    this.reach(table, columns);
  }

  /** Calls every watcher: writes may have been missed (another replica's, while not listening). */
  replayAll(): void {
    for (const watchers of this.watchers.values()) for (const w of watchers) w.changed();
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
      const table = tableName(node.table);
      if (table === undefined || !this.watchers.has(table)) return;
      const set = (node.updates ?? []).map((u) => columnName(u.column));
      if (this.reach(table, set)) this.relay?.(table, set);
    } else if (node.kind === 'DeleteQueryNode') {
      for (const from of node.from.froms) {
        const table = tableName(from);
        if (table !== undefined && this.reach(table, undefined)) this.relay?.(table, undefined);
      }
    }
  }

  /** Calls the watchers of `table` that a write setting `set` (undefined: a delete) concerns; whether any was. */
  private reach(table: string, set: readonly (string | undefined)[] | undefined): boolean {
    let reached = false;
    for (const w of this.watchers.get(table) ?? []) {
      if (set && w.columns && !set.some((c) => c === undefined || w.columns!.has(c))) continue;
      w.changed();
      reached = true;
    }
    return reached;
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
