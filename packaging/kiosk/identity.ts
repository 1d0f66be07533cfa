// The kiosk's device identity: one Ed25519 key pair, made on first start and kept in the data
// dir (directory 0700, file 0600, owner only). It never leaves the agent: the renderer and its
// applications never see it, and the upstream credential minted from its proofs stays here too.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { signNativeProof } from '../../sdk/client/native-proof';
import type { NativeProofOp, PlayerPublicKey } from '../../sdk/contract/native';
import { syncDirectory } from './durable';

export const IDENTITY_FILE = 'device-key.pem';

export class DeviceIdentity {
  private constructor(
    private readonly privateKey: crypto.KeyObject,
    readonly publicKey: PlayerPublicKey,
    readonly kid: string,
    /** Made by this load: nothing upstream knows it yet (a pending pairing of another key is void). */
    readonly created: boolean,
  ) {}

  /** Loads the key of `dir`, creating it (exclusively, owner-only, flushed) when there is none yet. */
  static async load(dir: string): Promise<DeviceIdentity> {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(dir, 0o700);
    const file = path.join(dir, IDENTITY_FILE);
    let pem: string | undefined;
    try {
      pem = fs.readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    // An empty file is a key named before its bytes reached the disk (a power cut during the first
    // start, before D-500): it never held a key, so none was ever used. Anything else is kept.
    if (pem?.trim() === '') {
      fs.rmSync(file);
      pem = undefined;
    }
    let created = false;
    if (pem === undefined) {
      const { privateKey } = crypto.generateKeyPairSync('ed25519');
      pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      // wx: two agents starting at once never overwrite each other's key; the loser reads the winner's.
      try {
        const tmp = `${file}.${process.pid}.tmp`;
        const fd = fs.openSync(tmp, 'wx', 0o600);
        try {
          fs.writeFileSync(fd, pem);
          fs.fsyncSync(fd); // on disk before it has its name
        } finally {
          fs.closeSync(fd);
        }
        fs.linkSync(tmp, file);
        fs.unlinkSync(tmp);
        syncDirectory(dir);
        created = true;
      } catch (linkError) {
        if ((linkError as NodeJS.ErrnoException).code !== 'EEXIST') throw linkError;
        pem = fs.readFileSync(file, 'utf8');
      }
    }
    const mode = fs.statSync(file).mode & 0o777;
    if (mode & 0o077) fs.chmodSync(file, 0o600);
    const privateKey = crypto.createPrivateKey(pem);
    if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`${file} does not hold an Ed25519 key`);
    // The JWK and its RFC 7638 thumbprint (members crv, kty, x in that order, no whitespace), by
    // Node's crypto: the agent starts without loading the JOSE library.
    const { x } = crypto.createPublicKey(privateKey).export({ format: 'jwk' }) as { x: string };
    const publicKey: PlayerPublicKey = { kty: 'OKP', crv: 'Ed25519', x };
    const kid = crypto
      .createHash('sha256')
      .update(JSON.stringify({ crv: 'Ed25519', kty: 'OKP', x }))
      .digest('base64url');
    return new DeviceIdentity(privateKey, publicKey, kid, created);
  }

  sign(op: NativeProofOp, nonce: string, nowMs?: number): Promise<string> {
    return signNativeProof(this.privateKey, { kid: this.kid, op, nonce, nowMs });
  }
}
