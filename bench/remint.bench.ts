// Manifests at fleet scale, in this process on one SQLite store: an edit of a playlist that 500
// screens show (set-based remint) against the same edit shown by one screen, then the 500 players'
// first manifest fetches after it (each mints its screen's new revision) against fetching 500
// manifests already minted. The figures back the decision in docs/decisions.md ("Manifests owned in
// one place"): the remint stays in the write, composition stays lazy and out of it.
import { PlaylistWriteV2 } from '../sdk/contract/playlist';
import { insertScreensShowing } from '../server/manifests/manifests.fixtures';
import { currentManifest } from '../server/manifests/minting';
import { imageDoc, imagePlacement, insertMedia, page } from '../server/playlists/content.fixtures';
import { findPlaylist, replacePlaylist, resolveForWrite } from '../server/playlists/playlists';
import { TestServer } from '../server/testing/harness';
import { median, ratio, table } from './harness';

const FLEET = 500;
const EDITS = 15;
const PAGES = 10;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export async function remintAtFleetScale(): Promise<void> {
  const server = await TestServer.start({ config: { logLevel: 'silent' } });
  try {
    const { services } = server;
    const { token, projectId } = await server.enroll();
    const media = await Promise.all(Array.from({ length: PAGES + 1 }, () => insertMedia(server, projectId)));
    const document = (n: number) => ({
      name: 'Fleet loop',
      pages: Array.from({ length: PAGES }, (_, i) =>
        page(`p${i}`, [imagePlacement('hero', { by: 'id', media_id: media[(i + n) % media.length] })]),
      ),
    });
    const created = async () => {
      const res = await server.request('POST', '/api/v1/playlists', { token, json: imageDoc(media[0]!) });
      if (res.status !== 201) throw new Error(`playlist: ${res.status} ${res.text}`);
      return res.json().id as string;
    };
    const showing = (playlistId: string, count: number) => insertScreensShowing(services, projectId, playlistId, count);
    let edit = 0;
    /** One PUT's transaction: a new served document, reminting every screen that shows it. */
    const replace = (playlistId: string) =>
      services.store.transaction(async (work) => {
        const doc = PlaylistWriteV2.parse(document(++edit));
        const before = await findPlaylist(work.db, projectId, playlistId);
        const resolution = await resolveForWrite(work, projectId, doc);
        await replacePlaylist(services, work, before, { doc, resolution, now: server.clock.now() });
      });

    const one = await created();
    await showing(one, 1);
    const fleet = await created();
    const screens = await showing(fleet, FLEET);
    for (let i = 0; i < 3; i++) await Promise.all([replace(one), replace(fleet)]); // warm-up

    const single: number[] = [];
    const many: number[] = [];
    for (let i = 0; i < EDITS; i++) {
      single.push(await timed(() => replace(one)));
      many.push(await timed(() => replace(fleet)));
    }
    const mint = await timed(() => Promise.all(screens.map((id) => currentManifest(services, id))));
    const read = await timed(() => Promise.all(screens.map((id) => currentManifest(services, id))));
    await replace(fleet);
    const mintSequential = await timed(async () => {
      for (const id of screens) await currentManifest(services, id);
    });

    table([
      { what: 'playlist edit shown by 1 screen (p50)', ms: median(single).toFixed(1), ratio: '1.00x' },
      {
        what: `playlist edit shown by ${FLEET} screens (p50)`,
        ms: median(many).toFixed(1),
        ratio: ratio(median(many), median(single)),
      },
      { what: `${FLEET} manifests read, already minted`, ms: read.toFixed(0), ratio: '1.00x' },
      { what: `${FLEET} first fetches at once (each mints)`, ms: mint.toFixed(0), ratio: ratio(mint, read) },
      {
        what: `${FLEET} mints one after another`,
        ms: mintSequential.toFixed(0),
        ratio: ratio(mintSequential, read),
      },
    ]);
  } finally {
    await server.stop();
  }
}
