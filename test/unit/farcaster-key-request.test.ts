import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { addressOf, bytesHex, custodyKey, domainSeparator, hexBytes, signDigest, typedDataDigest } from '../../src/providers/networks/farcaster-key-request.ts';

const text = (s: string) => new TextEncoder().encode(s);
const word = (v: bigint) => hexBytes(v.toString(16).padStart(64, '0'));
const hash = (...parts: Uint8Array[]) => keccak_256(Uint8Array.from(parts.flatMap((p) => [...p])));

/** The worked example of EIP-712 itself ("Ether Mail"), whose hashes and signature the EIP prints. */
describe('signing a Farcaster key request (EIP-712)', () => {
  it('computes the EIP-712 example’s domain separator, digest and signature', () => {
    const separator = domainSeparator({ name: 'Ether Mail', version: '1', chainId: 1n, verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC' });
    assert.equal(bytesHex(separator), '0xf2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f');
    const person = (name: string, wallet: string) => hash(keccak_256(text('Person(string name,address wallet)')), keccak_256(text(name)), word(BigInt(wallet)));
    const mail = hash(
      keccak_256(text('Mail(Person from,Person to,string contents)Person(string name,address wallet)')),
      person('Cow', '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826'),
      person('Bob', '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB'),
      keccak_256(text('Hello, Bob!')),
    );
    const digest = typedDataDigest(separator, mail);
    assert.equal(bytesHex(digest), '0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2');
    const signature = signDigest(digest, keccak_256(text('cow')));
    assert.equal(
      signature,
      '0x4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d07299936d304c153f6443dfa05f40ff007d72911b6f72307f996231605b915621c',
    );
  });

  it('derives the custody key a wallet derives first from a recovery phrase', () => {
    // The well-known development phrase: its first account is 0xf39F…2266.
    const key = custodyKey('test test test test test test test test test test test junk');
    assert.equal(addressOf(key), '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266');
    assert.throws(() => custodyKey('not a phrase'), /not a valid recovery phrase/);
  });
});
