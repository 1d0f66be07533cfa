// One playlist, read only: its pages in order, what each shows, how long, and its soundtrack.
import { Link } from 'wouter';
import type { Playlist } from '../../../sdk/contract/playlist';
import { useDashboard } from '../app/dashboard-context';
import { Notice, PageHeading } from '../app/PageHeading';
import { PAGES } from '../app/routes';
import { useLoaded } from '../app/use-loaded';
import { advanceSummary, placementSummary } from './playlist-summary';

export function PlaylistPage({ id }: { id: string }) {
  const { client } = useDashboard();
  const playlist = useLoaded<Playlist>(async () => (await client.playlists.get(id)).data, [client, id], 'The playlist');
  const p = playlist.value;
  return (
    <section className="page">
      <p className="crumbs">
        <Link href={PAGES.playlists}>Playlists</Link> /
      </p>
      <PageHeading>{p?.name ?? 'Playlist'}</PageHeading>
      <Notice text={playlist.error} error />
      {p && (
        <>
          <p className="hint">
            Revision {p.revision}. {p.pages.length} page{p.pages.length === 1 ? '' : 's'}, played in this order and then
            again.
          </p>
          <ol className="page-list">
            {p.pages.map((page, index) => (
              <li key={page.id} className="page-row">
                <h2>
                  Page {index + 1} <code>{page.id}</code>
                </h2>
                <p>
                  {advanceSummary(page.advance)}; {page.transition.type} transition
                  {page.visibility ? '; shown only at some times' : ''}. Canvas {page.canvas.width}×{page.canvas.height}
                  .
                </p>
                <ul>
                  {page.placements.map((placement) => (
                    <li key={placement.id}>{placementSummary(placement)}</li>
                  ))}
                </ul>
              </li>
            ))}
          </ol>
          {p.audio && p.audio.tracks.length > 0 && (
            <p>
              Soundtrack: {p.audio.tracks.length} track{p.audio.tracks.length === 1 ? '' : 's'}.
            </p>
          )}
        </>
      )}
    </section>
  );
}
