// Mounts the playback engine and the soundtrack on a stage element once, and feeds them the
// store's manifest. React never re-renders what is inside the stage.
import { useEffect, useRef } from 'react';
import type { RuntimeManifest } from '../../../sdk/contract/manifest';
import { PlaybackEngine } from '../playback/playback-engine';
import type { PlayerController } from '../runtime/player-controller';
import { SoundtrackPlayer } from '../soundtrack/soundtrack-player';
import { followController } from './follow-controller';
import type { PlayerStore } from '../state/player-store';

export function Stage({
  store,
  controller,
  onEngine,
}: {
  store: PlayerStore;
  controller: PlayerController;
  onEngine?: (engine: PlaybackEngine | null) => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const root = ref.current!;
    const soundtrack = new SoundtrackPlayer(root);
    const engine = new PlaybackEngine(root, {
      runtimeOrigin: controller.client.origin,
      get paired() {
        return store.getState().session?.paired ?? false;
      },
      get screenId() {
        return store.getState().manifest?.screenId ?? '';
      },
      now: () => controller.now(),
      launch: (launchUrl) => controller.client.launch(launchUrl),
      onActivated: (manifest: RuntimeManifest, derived: boolean) => {
        soundtrack.set(manifest.soundtrack);
        void controller.activated(manifest, derived);
      },
      onApplicationEvent: (placementId, code) =>
        void controller.report('info', 'application.event', { placement_id: placementId, code }),
      showing: (facts) => controller.showing(facts),
      onLockstepAdvance: (timeline, pageIndex) => void controller.advanceGroup(timeline, pageIndex),
      log: (message) => console.info(message),
    });
    onEngine?.(engine);
    const stopFollowing = followController(engine, controller);
    const feed = (manifest: RuntimeManifest | null) => {
      if (manifest) engine.setManifest(manifest);
    };
    feed(store.getState().manifest);
    const unsubscribe = store.subscribe((state, previous) => {
      if (state.manifest !== previous.manifest) feed(state.manifest);
    });
    return () => {
      unsubscribe();
      stopFollowing();
      onEngine?.(null);
      engine.destroy();
      soundtrack.destroy();
    };
  }, [store, controller, onEngine]);
  return <div className="stage" ref={ref} data-testid="stage" />;
}
