// The e2e specs' ports: each worker's Marquee server, and the one news site of the run (the
// browser's flags, fixed when the config is read, name its port).
export const E2E_PORT = Number(process.env.MARQUEE_E2E_PORT ?? 18765);
export const NEWS_PORT = E2E_PORT + 2;

/** The server of the worker with this parallel index (ports of two workers never meet). */
export const serverPort = (parallelIndex: number) => E2E_PORT + 10 * (parallelIndex + 1);
/** The kiosk agent of the worker with this parallel index (beside its server's port). */
export const kioskPort = (parallelIndex: number) => serverPort(parallelIndex) + 5;
