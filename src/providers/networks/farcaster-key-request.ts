/**
 * Farcaster's signed key request: the app that asks a person to approve a
 * signer proves who it is by signing (EIP-712, with the custody key of its own
 * Farcaster account) the app's fid, the signer's public key and a deadline.
 * Neynar checks the signature before it hands out the approval link.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';

/** Farcaster's SignedKeyRequestValidator on OP Mainnet (the domain the request is signed for). */
const KEY_REQUEST_DOMAIN = {
  name: 'Farcaster SignedKeyRequestValidator',
  version: '1',
  chainId: 10n,
  verifyingContract: '0x00000000FC700472606ED4fA22623Acf62c60553',
};
const KEY_REQUEST_TYPE = 'SignedKeyRequest(uint256 requestFid,bytes key,uint256 deadline)';
const DOMAIN_TYPE = 'EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)';
/** The account an Ethereum wallet derives first from a recovery phrase. */
const FIRST_ACCOUNT_PATH = "m/44'/60'/0'/0/0";

const text = (s: string) => new TextEncoder().encode(s);

export function hexBytes(hex: string): Uint8Array {
  const clean = hex.replace(/^0x/i, '');
  if (!/^([0-9a-f]{2})*$/i.test(clean)) throw new Error('not hexadecimal');
  return Uint8Array.from(clean.match(/../g) ?? [], (b) => Number.parseInt(b, 16));
}

export function bytesHex(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes).toString('hex')}`;
}

/** A 32-byte big-endian word, as the ABI encodes integers and addresses. */
function word(value: bigint): Uint8Array {
  return hexBytes(value.toString(16).padStart(64, '0'));
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((p) => [...p]));
}

/** EIP-712's domain separator for a domain of name, version, chain and contract. */
export function domainSeparator(domain: { name: string; version: string; chainId: bigint; verifyingContract: string }): Uint8Array {
  return keccak_256(
    concat(
      keccak_256(text(DOMAIN_TYPE)),
      keccak_256(text(domain.name)),
      keccak_256(text(domain.version)),
      word(domain.chainId),
      word(BigInt(domain.verifyingContract)),
    ),
  );
}

/** What is signed: "\x19\x01", the domain separator and the message's struct hash. */
export function typedDataDigest(separator: Uint8Array, structHash: Uint8Array): Uint8Array {
  return keccak_256(concat(Uint8Array.of(0x19, 0x01), separator, structHash));
}

/** An Ethereum signature: r, s and v (27 or 28), 65 bytes. */
export function signDigest(digest: Uint8Array, privateKey: Uint8Array): string {
  const recovered = secp256k1.sign(digest, privateKey, { prehash: false, format: 'recovered' });
  // noble puts the recovery bit first; Ethereum puts it last, plus 27.
  return bytesHex(concat(recovered.slice(1), Uint8Array.of(27 + recovered[0])));
}

export function keyRequestDigest(appFid: number, signerPublicKey: string, deadline: number): Uint8Array {
  const struct = keccak_256(concat(keccak_256(text(KEY_REQUEST_TYPE)), word(BigInt(appFid)), keccak_256(hexBytes(signerPublicKey)), word(BigInt(deadline))));
  return typedDataDigest(domainSeparator(KEY_REQUEST_DOMAIN), struct);
}

/** The custody key of the app's Farcaster account, from its recovery phrase. */
export function custodyKey(mnemonic: string): Uint8Array {
  const phrase = mnemonic.trim().split(/\s+/).join(' ');
  if (!validateMnemonic(phrase, wordlist)) throw new Error('is not a valid recovery phrase (BIP-39, English words)');
  const key = HDKey.fromMasterSeed(mnemonicToSeedSync(phrase)).derive(FIRST_ACCOUNT_PATH).privateKey;
  if (!key) throw new Error('gives no key');
  return key;
}

/** The app's signature over a request to add `signerPublicKey`, valid until `deadline` (Unix seconds). */
export function signKeyRequest(mnemonic: string, appFid: number, signerPublicKey: string, deadline: number): string {
  return signDigest(keyRequestDigest(appFid, signerPublicKey, deadline), custodyKey(mnemonic));
}

/** The Ethereum address of a private key: the last 20 bytes of the hash of its public key. */
export function addressOf(privateKey: Uint8Array): string {
  return bytesHex(keccak_256(secp256k1.getPublicKey(privateKey, false).slice(1)).slice(12));
}
