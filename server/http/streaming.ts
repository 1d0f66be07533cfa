// Streaming a response body (media exports, release files): a client that hangs up is not an error.
import type { Request, Response } from 'express';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Sends `source` as the body after the headers already set. Resolves once it was sent, or once the
 * client went away mid-transfer (an ended answer, not a server error); rejects on a read error.
 */
export async function streamToClient(req: Request, res: Response, source: Readable): Promise<void> {
  // Headers go out now, so a client that hangs up before the first byte is an ended answer too.
  res.flushHeaders();
  try {
    await pipeline(source, res);
  } catch (error) {
    if (!res.writableFinished && (req.destroyed || res.destroyed)) return;
    throw error;
  }
}
