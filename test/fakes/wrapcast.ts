/**
 * A local subset of Neynar's Farcaster API, from the fact sheet: every call needs
 * `x-api-key` (401 otherwise); signers are a table of signer_uuid → {fid, status,
 * api key}, and a cast needs an approved signer of the same key; text is limited
 * in UTF-8 bytes (320, or 1,024 as a long cast), at most 2 embeds of 256 bytes
 * each, parents are "0x" + 40 hex; `idem` makes a repeat return the first cast.
 * New signers (POST /v2/farcaster/signer) become pending_approval once a key
 * request signed by the app's custody address is registered (signed_key), and
 * approved by `approval.fid` `approval.afterMs` later (wall clock), as when a
 * person opens the link in the Farcaster app.
 * Errors use Neynar's {code, message, property} shape. Its create endpoint is
 * POST /v2/farcaster/cast (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import crypto from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export interface FakeSigner {
  fid: number;
  status: 'generated' | 'pending_approval' | 'approved' | 'revoked';
  apiKey: string;
  /** Ed25519 public key (0x + 64 hex). */
  publicKey?: string;
  /** When the signed key request was registered (wall clock), for the person's approval. */
  registeredAt?: number;
}

export interface FakeCast {
  hash: string;
  fid: number;
  text: string;
  embeds: { url?: string }[];
  parent?: string;
  channel_id?: string;
  idem?: string;
}

export interface WrapcastFake extends NetworkFake {
  apiKey: string;
  signers: Map<string, FakeSigner>;
  users: Map<number, { fid: number; username: string; display_name: string; pfp_url: string; follower_count: number; following_count: number }>;
  casts: FakeCast[];
  /** Farcaster accounts of apps: fid → custody address (lower case), which must sign key requests. */
  custody: Map<number, string>;
  /** Who approves the next signer in the Farcaster app (their fid), and how long after the link is shown. */
  approval: { fid: number; afterMs: number };
}

const error = (status: number, code: string, message: string, property?: string): FakeAnswer => ({
  status,
  body: { code, message, ...(property ? { property } : {}) },
});

const text = (s: string) => new TextEncoder().encode(s);
const hex = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const uint = (n: number | bigint) => hex(BigInt(n).toString(16).padStart(64, '0'));
const keccak = (...parts: Uint8Array[]) => keccak_256(Buffer.concat(parts));

/**
 * The address that signed a SignedKeyRequest (Farcaster's EIP-712 type, on
 * OP Mainnet's SignedKeyRequestValidator), or undefined for a malformed signature.
 */
function signerOf(appFid: number, key: string, deadline: number, signature: string): string | undefined {
  const domain = keccak(
    keccak(text('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)')),
    keccak(text('Farcaster SignedKeyRequestValidator')),
    keccak(text('1')),
    uint(10),
    uint(BigInt('0x00000000FC700472606ED4fA22623Acf62c60553')),
  );
  const request = keccak(keccak(text('SignedKeyRequest(uint256 requestFid,bytes key,uint256 deadline)')), uint(appFid), keccak(hex(key)), uint(deadline));
  const digest = keccak(Uint8Array.of(0x19, 0x01), domain, request);
  const bytes = hex(signature);
  if (bytes.length !== 65 || (bytes[64] !== 27 && bytes[64] !== 28)) return undefined;
  try {
    const publicKey = secp256k1.recoverPublicKey(Buffer.concat([Uint8Array.of(bytes[64] - 27), bytes.slice(0, 64)]), digest, { prehash: false });
    const uncompressed = secp256k1.Point.fromBytes(publicKey).toBytes(false);
    return `0x${Buffer.from(keccak_256(uncompressed.slice(1)).slice(12)).toString('hex')}`;
  } catch {
    return undefined;
  }
}

const CHANNELS = [
  { id: 'neynar', name: 'Neynar', parent_url: 'chain://eip155:1/erc721:0xneynar' },
  { id: 'dev', name: 'Developers', parent_url: 'https://farcaster.xyz/~/channel/dev' },
];

export async function startWrapcastFake(): Promise<WrapcastFake> {
  const apiKey = 'NEYNAR-TEST-KEY-5A1F';
  const signers = new Map<string, FakeSigner>();
  const users: WrapcastFake['users'] = new Map();
  const casts: FakeCast[] = [];

  const keyed =
    (handler: (req: RecordedRequest) => FakeAnswer) =>
    (req: RecordedRequest): FakeAnswer => {
      const key = req.headers['x-api-key'];
      if (!key) return error(401, 'Unauthorized', 'API key is missing');
      if (key !== apiKey) return error(401, 'Unauthorized', 'Invalid API key');
      return handler(req);
    };

  const custody = new Map<number, string>();
  const approval = { fid: 0, afterMs: 1500 };

  // POST /v2/farcaster/signer: a new Neynar-managed key, not yet tied to any account.
  const createSigner = keyed((req) => {
    const uuid = crypto.randomUUID();
    const publicKey = `0x${crypto.randomBytes(32).toString('hex')}`;
    signers.set(uuid, { fid: 0, status: 'generated', apiKey: String(req.headers['x-api-key']), publicKey });
    return { body: { signer_uuid: uuid, public_key: publicKey, status: 'generated' } };
  });

  // POST /v2/farcaster/signer/signed_key: the app's custody key must have signed the request (EIP-712).
  const registerSignedKey = keyed((req) => {
    const b = req.json ?? {};
    const signer = signers.get(b.signer_uuid ?? '');
    if (!signer || signer.apiKey !== req.headers['x-api-key']) return error(404, 'NotFound', 'Signer not found', 'signer_uuid');
    if (signer.status !== 'generated') return error(400, 'InvalidField', `Signer is already ${signer.status}`, 'signer_uuid');
    if (!Number.isSafeInteger(b.app_fid) || !custody.has(b.app_fid)) return error(400, 'InvalidField', 'app_fid is not a registered fid', 'app_fid');
    if (!Number.isSafeInteger(b.deadline) || b.deadline * 1000 <= Date.now()) return error(400, 'InvalidField', 'deadline must be in the future', 'deadline');
    if (typeof b.signature !== 'string' || signerOf(b.app_fid, signer.publicKey!, b.deadline, b.signature) !== custody.get(b.app_fid)) {
      return error(400, 'InvalidField', 'Invalid signature', 'signature');
    }
    signer.status = 'pending_approval';
    signer.registeredAt = Date.now();
    const token = `0x${crypto.randomBytes(12).toString('hex')}`;
    return {
      body: {
        signer_uuid: b.signer_uuid,
        public_key: signer.publicKey,
        status: signer.status,
        signer_approval_url: `https://client.farcaster.xyz/deeplinks/signed-key-request?token=${token}`,
      },
    };
  });

  /** The person approves in the Farcaster app some time after the link was shown. */
  const settle = (signer: FakeSigner) => {
    if (signer.status === 'pending_approval' && approval.fid && Date.now() - signer.registeredAt! >= approval.afterMs) {
      signer.status = 'approved';
      signer.fid = approval.fid;
    }
  };

  const castView = (c: FakeCast) => ({ hash: c.hash, author: { fid: c.fid }, text: c.text });

  const publish = keyed((req) => {
    const b = req.json ?? {};
    const signer = signers.get(b.signer_uuid);
    if (!signer || signer.apiKey !== req.headers['x-api-key']) return error(404, 'NotFound', 'Signer not found', 'signer_uuid');
    if (signer.status !== 'approved') return error(403, 'Forbidden', `Signer is ${signer.status}, not approved`, 'signer_uuid');
    const embeds = b.embeds ?? [];
    if (b.text === undefined && embeds.length === 0) return error(400, 'InvalidField', 'text or embeds is required', 'text');
    const bytes = Buffer.byteLength(b.text ?? '', 'utf8');
    if (bytes > 1024) return error(400, 'InvalidField', `text is ${bytes} bytes; a cast takes at most 1024`, 'text');
    if (!Array.isArray(embeds) || embeds.length > 2) return error(400, 'InvalidField', 'embeds must contain at most 2 items', 'embeds');
    for (const e of embeds) {
      if (typeof e.url === 'string' && Buffer.byteLength(e.url) > 256) return error(400, 'InvalidField', 'embed url is longer than 256 bytes', 'embeds');
      if (typeof e.url !== 'string' && !e.cast_id) return error(400, 'InvalidField', 'embed must have url or cast_id', 'embeds');
    }
    if (b.parent !== undefined) {
      if (!/^0x[0-9a-f]{40}$/.test(b.parent)) return error(400, 'InvalidField', 'parent must be a cast hash (0x + 40 hex) or a URL', 'parent');
      if (!casts.some((c) => c.hash === b.parent)) return error(404, 'NotFound', 'Parent cast not found', 'parent');
    }
    if (b.channel_id !== undefined && !CHANNELS.some((c) => c.id === b.channel_id)) return error(400, 'InvalidField', 'Channel not found', 'channel_id');
    // The same idem from the same signer: the cast made the first time.
    const repeat = b.idem ? casts.find((c) => c.idem === b.idem && c.fid === signer.fid) : undefined;
    if (repeat) return { body: { success: true, cast: castView(repeat) } };
    const cast: FakeCast = {
      hash: `0x${crypto.randomBytes(20).toString('hex')}`,
      fid: signer.fid,
      text: b.text ?? '',
      embeds,
      ...(b.parent ? { parent: b.parent } : {}),
      ...(b.channel_id ? { channel_id: b.channel_id } : {}),
      ...(b.idem ? { idem: b.idem } : {}),
    };
    casts.push(cast);
    return { body: { success: true, cast: castView(cast) } };
  });

  const fake = (await startNetworkFake({
    'GET /v2/farcaster/signer': keyed((req) => {
      const signer = signers.get(req.query.signer_uuid ?? '');
      if (!signer || signer.apiKey !== req.headers['x-api-key']) return error(404, 'NotFound', 'Signer not found', 'signer_uuid');
      settle(signer);
      return {
        body: {
          signer_uuid: req.query.signer_uuid,
          public_key: signer.publicKey ?? '0x8e7d9b0f2c4a6e1d3b5f7a9c0e2d4b6f8a1c3e5d7b9f0a2c4e6d8b0f2a4c6e8d',
          status: signer.status,
          ...(signer.status === 'generated' ? {} : { fid: signer.fid }),
        },
      };
    }),
    'GET /v2/farcaster/user/bulk': keyed((req) => {
      const fids = (req.query.fids ?? '').split(',').map(Number);
      return { body: { users: fids.map((fid) => users.get(fid)).filter(Boolean) } };
    }),
    'GET /v2/farcaster/channel/search': keyed((req) => {
      const q = (req.query.q ?? '').toLowerCase();
      return { body: { channels: CHANNELS.filter((c) => c.id.includes(q) || c.name.toLowerCase().includes(q)) } };
    }),
    'POST /v2/farcaster/signer': createSigner,
    'POST /v2/farcaster/signer/signed_key': registerSignedKey,
    'POST /v2/farcaster/signer/signed_key/': registerSignedKey,
    'POST /v2/farcaster/cast': publish,
    'POST /v2/farcaster/cast/': publish,
  })) as WrapcastFake;

  // Store, then answer a 5xx (`storeThenFail`) on the cast, in Neynar's {code, message} shape.
  fake.create = {
    route: 'POST /v2/farcaster/cast',
    serverError: (status) =>
      error(status, (STATUS_CODES[status] ?? 'Internal Server Error').replace(/\s+/g, ''), STATUS_CODES[status] ?? 'Internal Server Error'),
  };
  return Object.assign(fake, { apiKey, signers, users, casts, custody, approval });
}
