// What a stage's engine follows from the player controller, apart from the manifest: clock steps,
// and the group's barriers. An engine made after a barrier was heard (the stage mounted again)
// gets that barrier first, so each new loop of the group's timeline starts from it (D-397).
import type { PlaybackEngine } from '../playback/playback-engine';
import type { PlayerController } from '../runtime/player-controller';

type Follower = Pick<PlaybackEngine, 'clockChanged' | 'applyBarrier'>;
type Leader = Pick<PlayerController, 'onClockStep' | 'onBarrier' | 'latestBarrier'>;

/** Starts following; returns the function that stops. */
export function followController(engine: Follower, controller: Leader): () => void {
  const stopFollowingClock = controller.onClockStep(() => engine.clockChanged());
  const latest = controller.latestBarrier;
  if (latest) engine.applyBarrier(latest);
  const stopFollowingBarriers = controller.onBarrier((barrier) => engine.applyBarrier(barrier));
  return () => {
    stopFollowingClock();
    stopFollowingBarriers();
  };
}
