// The project's playlists, read once per page (names for the screens, choices for an assignment).
import type { Playlist } from '../../../sdk/contract/playlist';
import { useDashboard } from '../app/dashboard-context';
import { type Loaded, useLoaded } from '../app/use-loaded';

export function usePlaylists(): Loaded<Playlist[]> {
  const { client } = useDashboard();
  return useLoaded(async () => (await client.playlists.list()).data.items, [client], 'The playlists');
}

export function playlistName(playlists: readonly Playlist[] | undefined, id: string | undefined): string | undefined {
  if (!id) return undefined;
  return playlists?.find((p) => p.id === id)?.name ?? id;
}
