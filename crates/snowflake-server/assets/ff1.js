// FF1, the format-preserving cipher of NIST SP 800-38G (Rev. 1), as the
// Rust crate snowflake-mask runs it: radix 2, AES-256, the empty tweak. A
// number of n bits is the numeral string of its n binary digits, most
// significant first, so NUM₂(X) is the number itself and each half is a
// BigInt below 2^u or 2^v. No DOM, no key text: the caller passes
// WebCrypto's SubtleCrypto (the browser's, or Node's crypto.webcrypto) and
// the key's 32 bytes.
//
// # Why this is written out here
//
// The page must work from a saved file with the network off, under a CSP
// that admits its one inline script, so it brings no library. AES itself is
// WebCrypto's; what is written here is FF1's bookkeeping around it (SP
// 800-38G, Algorithms 7 and 8), narrowed by the empty tweak and radix 2:
//
// - P (16 bytes) is fixed by n; Q = [0]^(15-b) ‖ [i] ‖ [NUM(B)]^b is 16
//   bytes as well, since t = 0 and b = ⌈v/8⌉ < 16. So P ‖ Q is two blocks.
// - FF1's PRF is CBC-MAC with a zero IV: the last block of AES-CBC over
//   P ‖ Q, which is bytes 16 to 32 of WebCrypto's output (it appends a
//   padding block of its own, bytes 32 to 48, which is ignored).
// - S is the first d = 4⌈b/4⌉ + 4 bytes of R; d ≤ 16 for every n here, so
//   R alone suffices and the CIPH(R ⊕ [j]) blocks of step 6.iii never run.
//   For IDs (n ≤ 64, b ≤ 4) d is 8.
// - Each round is one awaited WebCrypto call: ten per number.
//
// scripts/make-mask-vectors.py holds an independent transcription in
// Python; the tests run its vectors and Zcash's published radix-2 ones.

/** The narrowest string FF1 is approved for in radix 2: 2^20 ≥ a million values (SP 800-38G Rev. 1). */
export const MIN_BITS = 20;
/** The widest string this module reads: b stays under 16, so P ‖ Q stays two blocks and d ≤ 16. */
export const MAX_BITS = 128;
/** AES-256's key, in bytes. */
export const KEY_BYTES = 32;

const ROUNDS = 10;
const BLOCK = 16;
const RADIX = 2;
const CBC = { name: 'AES-CBC', iv: new Uint8Array(BLOCK) };

/** An AES-256 key for FF1's PRF, made from 32 bytes; WebCrypto keeps it, not extractable. */
export async function aesKey(subtle, bytes) {
  if (!(bytes instanceof Uint8Array) || bytes.length !== KEY_BYTES) throw new RangeError(`FF1 with AES-256 takes a key of ${KEY_BYTES} bytes`);
  return subtle.importKey('raw', bytes, { name: 'AES-CBC' }, false, ['encrypt']);
}

/** FF1 over strings of `bits` binary digits, under one key. */
export class Ff1 {
  /** `key` from aesKey(); `bits` from MIN_BITS to MAX_BITS. */
  constructor(subtle, key, bits) {
    if (!Number.isInteger(bits) || bits < MIN_BITS || bits > MAX_BITS) throw new RangeError(`FF1 here takes ${MIN_BITS} to ${MAX_BITS} binary digits, not ${bits}`);
    this.subtle = subtle;
    this.key = key;
    this.n = bits;
    this.u = Math.floor(bits / 2); // step 1
    this.v = bits - this.u;
    this.b = Math.ceil(this.v / 8); // step 3: ⌈⌈v·log₂ 2⌉ / 8⌉
    this.d = 4 * Math.ceil(this.b / 4) + 4; // step 4
    // Step 5: P = [1] ‖ [2] ‖ [1] ‖ [radix]^3 ‖ [10] ‖ [u mod 256] ‖ [n]^4 ‖ [t]^4, t = 0.
    this.p = new Uint8Array(BLOCK);
    this.p.set([1, 2, 1, 0, 0, RADIX, ROUNDS, this.u % 256]);
    new DataView(this.p.buffer).setUint32(8, bits);
  }

  /** FF1.Encrypt (Algorithm 7) of a number below 2^bits. */
  async encrypt(x) {
    let [a, b] = this.split(x);
    for (let i = 0; i < ROUNDS; i += 1) {
      const y = await this.round(i, b);
      const c = BigInt.asUintN(i % 2 === 0 ? this.u : this.v, a + y);
      a = b;
      b = c;
    }
    return this.join(a, b);
  }

  /** FF1.Decrypt (Algorithm 8): the inverse of encrypt. */
  async decrypt(x) {
    let [a, b] = this.split(x);
    for (let i = ROUNDS - 1; i >= 0; i -= 1) {
      const y = await this.round(i, a);
      const c = BigInt.asUintN(i % 2 === 0 ? this.u : this.v, b - y);
      b = a;
      a = c;
    }
    return this.join(a, b);
  }

  // Step 2: A is the top u digits, B the low v.
  split(x) {
    const value = BigInt(x);
    if (value < 0n || value >> BigInt(this.n) !== 0n) throw new RangeError(`${value} is not a string of ${this.n} binary digits`);
    return [value >> BigInt(this.v), BigInt.asUintN(this.v, value)];
  }

  // Step 7: A ‖ B, where A has u digits and B has v after the tenth round.
  join(a, b) {
    return (a << BigInt(this.v)) | b;
  }

  // Steps 6.i to 6.iv: y = NUM(S) for round i over the half `half`.
  async round(i, half) {
    const block = new Uint8Array(2 * BLOCK);
    block.set(this.p);
    // Q: zeros, then [i], then NUM(half) in b bytes, big-endian.
    block[2 * BLOCK - this.b - 1] = i;
    let rest = half;
    for (let k = 2 * BLOCK - 1; k >= 2 * BLOCK - this.b; k -= 1) {
      block[k] = Number(rest & 0xffn);
      rest >>= 8n;
    }
    const out = new Uint8Array(await this.subtle.encrypt(CBC, this.key, block));
    // R is the CBC-MAC: the second block out. S is its first d bytes.
    let y = 0n;
    for (let k = BLOCK; k < BLOCK + this.d; k += 1) y = (y << 8n) | BigInt(out[k]);
    return y;
  }
}
