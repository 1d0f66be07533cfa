// What a stage's engine follows from the player controller, apart from the manifest: clock steps,
// and the group's barriers. An engine made after barriers were heard (the stage mounted again)
// gets each timeline's last one first, so each new loop of a timeline starts from it (D-397, D-402).
import type { PlaybackEngine } from '../playback/playback-engine';
import type { PlayerController } from '../runtime/player-controller';

type Follower = Pick<PlaybackEngine, 'clockChanged' | 'applyBarrier'>;
type Leader = Pick<PlayerController, 'onClockStep' | 'onBarrier' | 'latestBarriers'>;

/** Starts following; returns the function that stops. */
export function followController(engine: Follower, controller: Leader): () => void {
  const stopFollowingClock = controller.onClockStep(() => engine.clockChanged());
  for (const barrier of controller.latestBarriers) engine.applyBarrier(barrier);
  const stopFollowingBarriers = controller.onBarrier((barrier) => engine.applyBarrier(barrier));
  return () => {
    stopFollowingClock();
    stopFollowingBarriers();
  };
}
