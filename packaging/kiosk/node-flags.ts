// The Node flags the kiosk agent runs with: `marquee-kiosk` (packaging/linux) passes them, and so
// do the e2e specs and the bench, which run the agent as it does (node-flags.test.ts keeps the
// launcher in step with this list).
//
// --max-semi-space-size: V8 grows the young generation's two semi-spaces up to 16 MiB each as the
// process allocates, and keeps them committed; the agent's resident memory climbed by about 30 MB
// over its first thousand manifest swaps that way while its live heap stayed near 19 MB (D-361).
// 4 MiB bounds that growth and reaches it within minutes of start; the agent's allocations are
// small and short-lived, so the more frequent scavenges cost it next to nothing.
export const AGENT_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];
