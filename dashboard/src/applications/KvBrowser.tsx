// An application's key/value store as its owner sees it (the routes an agent uses): keys a page of
// 200 at a time, a value read on demand, text values edited in place with the revision read
// (If-Match, so a screen's write in between is a conflict, not lost), new keys, deletes. The list's
// row of the key shown never lags the value read beside it.
import { Confirm } from '../app/Confirm';
import { useEffect, useId, useState } from 'react';
import { KV_LIST_MAX_ITEMS, type KVEntry, type KVSummary } from '../../../sdk/contract/kv';
import { useDashboard } from '../app/dashboard-context';
import { byteSize } from '../app/format';
import { Notice } from '../app/PageHeading';
import { useLoaded } from '../app/use-loaded';
import { MarqueeProblem } from '../../../sdk/client/problem';
import { problemMessage } from '../state/problem-message';
import {
  currentCursor,
  decodeText,
  FIRST_PAGE,
  isTextual,
  type KvPages,
  nextPage,
  pageRange,
  pageRead,
  previousPage,
  withEntryRead,
} from './kv-pager';

const TEXT_TYPE = 'text/plain; charset=utf-8';

export function KvBrowser({ applicationId }: { applicationId: string }) {
  const { client } = useDashboard();
  const [pages, setPages] = useState<KvPages>(FIRST_PAGE);
  const [selected, setSelected] = useState<string | null>(null);
  /** What the detail last read of the selected key. */
  const [read, setRead] = useState<KVSummary | null>(null);
  const [result, setResult] = useState<{ text: string; error: boolean } | null>(null);
  const cursor = currentCursor(pages);
  const list = useLoaded(
    async () => (await client.kv.list(applicationId, cursor ? { cursor } : {})).data,
    [client, applicationId, cursor],
    'The keys',
  );
  const next = list.value?.next_cursor ?? null;
  useEffect(() => setPages((p) => pageRead(p, next)), [next]);
  const items = withEntryRead(list.value?.items ?? [], read);
  const select = (key: string | null) => {
    setRead(null);
    setSelected(key);
  };
  const changed = (text: string) => {
    setResult({ text, error: false });
    list.reload();
  };
  return (
    <section className="panel wide-panel kv" aria-labelledby="kv-heading">
      <h2 id="kv-heading">Key/value store</h2>
      <p className="hint">
        What the application's placements read and write on screens through the SDK bridge. Changes here reach them at
        once.
      </p>
      <Notice text={result?.text ?? list.error} error={result?.error ?? Boolean(list.error)} />
      <div className="kv-layout">
        <div className="kv-keys">
          <table className="table" data-testid="kv-keys">
            <caption>{list.loading ? 'Loading keys…' : pageRange(pages, items, KV_LIST_MAX_ITEMS)}</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Type</th>
                <th scope="col">Size</th>
                <th scope="col">Revision</th>
              </tr>
            </thead>
            <tbody>
              {items.map((entry) => (
                <tr key={entry.key} className={entry.key === selected ? 'selected' : undefined}>
                  <th scope="row">
                    <button
                      type="button"
                      className="link-button"
                      aria-pressed={entry.key === selected}
                      onClick={() => select(entry.key)}
                    >
                      {entry.key}
                    </button>
                  </th>
                  <td data-label="Type">{entry.content_type}</td>
                  <td data-label="Size">{byteSize(entry.bytes)}</td>
                  <td data-label="Revision">{entry.revision}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav className="row pager" aria-label="Key pages">
            <button type="button" disabled={pages.index === 0} onClick={() => setPages(previousPage)}>
              Previous keys
            </button>
            <button type="button" disabled={pages.next === null} onClick={() => setPages(nextPage)}>
              Next keys
            </button>
          </nav>
        </div>
        <div className="kv-detail">
          {selected ? (
            <>
              <p>
                <button type="button" className="secondary" onClick={() => select(null)}>
                  New key…
                </button>
              </p>
              <KvValue
                key={selected}
                applicationId={applicationId}
                entryKey={selected}
                onRead={setRead}
                onChanged={changed}
                onDeleted={(text) => {
                  select(null);
                  changed(text);
                }}
                onFailed={(text) => setResult({ text, error: true })}
              />
            </>
          ) : (
            <NewKey
              applicationId={applicationId}
              onCreated={(key) => {
                select(key);
                changed(`Created ${key}.`);
              }}
              onFailed={(text) => setResult({ text, error: true })}
            />
          )}
        </div>
      </div>
    </section>
  );
}

function KvValue({
  applicationId,
  entryKey,
  onRead,
  onChanged,
  onDeleted,
  onFailed,
}: {
  applicationId: string;
  entryKey: string;
  onRead: (entry: KVSummary) => void;
  onChanged: (text: string) => void;
  onDeleted: (text: string) => void;
  onFailed: (text: string) => void;
}) {
  const { client } = useDashboard();
  const id = useId();
  const entry = useLoaded<KVEntry>(
    async () => (await client.kv.get(applicationId, entryKey)).data,
    [client, applicationId, entryKey],
    'The value',
  );
  const [draft, setDraft] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const e = entry.value;
  useEffect(() => {
    if (e) onRead(e);
  }, [e, onRead]);
  const text = e && isTextual(e.content_type) ? decodeText(client.kv.bytes(e)) : null;
  const save = async () => {
    if (!e || draft === null) return;
    try {
      await client.kv.set(applicationId, entryKey, draft, { ifMatch: e.revision, contentType: e.content_type });
      setDraft(null);
      entry.reload();
      onChanged(`Saved ${entryKey}.`);
    } catch (error) {
      if (error instanceof MarqueeProblem && error.status === 412) {
        // Someone (a screen, an agent) wrote it since: read theirs, keep this edit to save over it or discard.
        entry.reload();
        onFailed(
          `${entryKey} was changed since you opened it. Save again to replace it with your edit, or discard your edit to see theirs.`,
        );
        return;
      }
      onFailed(problemMessage(error, `${entryKey} could not be saved`));
    }
  };
  const remove = async () => {
    if (!e) return;
    try {
      await client.kv.delete(applicationId, entryKey, e.revision);
      onDeleted(`Deleted ${entryKey}.`);
    } catch (error) {
      setConfirming(false);
      onFailed(problemMessage(error, `${entryKey} could not be deleted`));
    }
  };
  return (
    <section aria-labelledby={`${id}-heading`} className="stack" data-testid="kv-value">
      <h3 id={`${id}-heading`}>
        <code>{entryKey}</code>
      </h3>
      <Notice text={entry.error} error />
      {e && (
        <>
          <p className="hint">
            {e.content_type} · {byteSize(e.bytes)} · revision {e.revision}
          </p>
          {text !== null ? (
            <label>
              <span>Value</span>
              <textarea
                rows={8}
                value={draft ?? text}
                onChange={(ev) => setDraft(ev.currentTarget.value)}
                spellCheck={false}
              />
            </label>
          ) : (
            <p>
              Binary value ({byteSize(e.bytes)}, SHA-256 {e.sha256.slice(0, 12)}…): not shown here.
            </p>
          )}
          <div className="row">
            {text !== null && (
              <button type="button" disabled={draft === null || draft === text} onClick={() => void save()}>
                Save
              </button>
            )}
            {draft !== null && (
              <button type="button" className="secondary" onClick={() => setDraft(null)}>
                Discard my edit
              </button>
            )}
            {!confirming ? (
              <button
                type="button"
                className="quiet danger-text"
                data-asks="delete-key"
                onClick={() => setConfirming(true)}
              >
                Delete…
              </button>
            ) : (
              <Confirm
                asker="delete-key"
                onCancel={() => setConfirming(false)}
                question={`Delete ${entryKey}? Screens reading it find it gone.`}
              >
                <button type="button" className="danger" onClick={() => void remove()}>
                  Delete {entryKey}
                </button>
              </Confirm>
            )}
          </div>
        </>
      )}
    </section>
  );
}

function NewKey({
  applicationId,
  onCreated,
  onFailed,
}: {
  applicationId: string;
  onCreated: (key: string) => void;
  onFailed: (text: string) => void;
}) {
  const { client } = useDashboard();
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [contentType, setContentType] = useState(TEXT_TYPE);
  const create = async () => {
    try {
      // No If-Match: creates only, so an existing key is a conflict rather than overwritten.
      await client.kv.set(applicationId, key, value, { contentType });
      onCreated(key);
    } catch (error) {
      onFailed(problemMessage(error, `${key || 'The key'} could not be created`));
    }
  };
  return (
    <form
      className="stack"
      aria-labelledby="new-key-heading"
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
    >
      <h3 id="new-key-heading">Add a key</h3>
      <p className="hint">Choose a key in the list to read, edit or delete it.</p>
      <label>
        <span>Key</span>
        <input value={key} required onChange={(e) => setKey(e.currentTarget.value)} />
      </label>
      <label>
        <span>Content type</span>
        <input value={contentType} required onChange={(e) => setContentType(e.currentTarget.value)} />
      </label>
      <label>
        <span>Value</span>
        <textarea rows={5} value={value} onChange={(e) => setValue(e.currentTarget.value)} spellCheck={false} />
      </label>
      <div className="row">
        <button type="submit">Add key</button>
      </div>
    </form>
  );
}
