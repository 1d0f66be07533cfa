// The unit project's global setup: build the `marquee` command once, before any test file runs it.
import { ensureCliBundle } from './cli-bundle';

export default async function setup(): Promise<void> {
  await ensureCliBundle();
}
