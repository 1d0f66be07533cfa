// Playlists: the list. The dashboard assigns playlists to screens and reworks a draft of one on its
// page; agents and the CLI write them (spec: the dashboard does not author playlists; D-300).
import { Link } from 'wouter';
import { Notice, PageHeading } from '../app/PageHeading';
import { playlistPath } from '../app/routes';
import { sortedScreens } from '../state/screens-store';
import { useScreens } from '../app/dashboard-context';
import { usePlaylists } from './use-playlists';

export function PlaylistsPage() {
  const playlists = usePlaylists();
  const screens = sortedScreens(useScreens((s) => s.byId));
  return (
    <section className="page">
      <PageHeading>Playlists</PageHeading>
      <p className="hint">
        Playlists are written by your project's agent or the <code>marquee</code> command; here you see them, assign
        them to screens, and open one to rework and preview it.
      </p>
      <Notice text={playlists.error} error />
      {playlists.value?.length === 0 && <p className="empty-state">No playlists yet.</p>}
      <table className="table">
        <caption className="visually-hidden">Playlists</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Pages</th>
            <th scope="col">Screens playing it</th>
          </tr>
        </thead>
        <tbody>
          {playlists.value?.map((p) => {
            const showing = screens.filter((s) => s.playlist_id === p.id);
            return (
              <tr key={p.id}>
                <th scope="row">
                  <Link href={playlistPath(p.id)}>{p.name}</Link>
                </th>
                <td data-label="Pages">{p.pages.length}</td>
                <td data-label="Screens playing it">{showing.length ? showing.map((s) => s.label).join(', ') : '—'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
