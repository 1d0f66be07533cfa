// The stream-control event types every replayable stream may send, apart from the event catalogue
// so a stream client can know them without loading the schemas (the CLI starts faster).

/** spec Events: sent once at the current head when a cursor cannot be resumed; the stream then closes. */
export const STREAM_RESYNC_REQUIRED = 'stream.resync_required';
/** spec Events: payload-free frame that moves a runtime stream's cursor past audience-filtered events. */
export const STREAM_CURSOR = 'stream.cursor';
