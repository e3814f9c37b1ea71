/* Checksums and hashes (include/pairbound/checksum.h): HDF5's Fletcher32,
 * computed so that gcc vectorises it; SHA-256 (nettle) and XXH3-128
 * (libxxhash). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/sha2.h>
#include <xxhash.h>

#include "pairbound/checksum.h"
#include "pairbound/error.h"

/* HDF5's loop adds one word at a time, sum1 += w_i; sum2 += sum1, and folds
 * both sums to 17 bits after every 360 words.  Over one such block of n words
 * that is, from (s1, s2),
 *   s1' = s1 + A,  s2' = s2 + n s1 + B,  A = sum_i w_i,  B = sum_i (n - i) w_i
 * exactly in 32-bit arithmetic (all of it wraps modulo 2^32 as HDF5's would).
 * A and B come from PB_CK_LANES interleaved pairs of running sums, lane l
 * taking the words i = t L + l (t = 0 .. T-1, T = floor(n / L)):
 * s1_l = sum_t w, s2_l = sum_t (T - 1 - t) w, so that the vector part gives
 *   B = L sum_l s2_l + L sum_l s1_l - sum_l l s1_l + (n - L T) A
 * and the last n - L T words are added one by one.  The lane loop has no
 * dependence across lanes: gcc vectorises it even at -O2. */
#define PB_CK_LANES 8

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx2", "default")))
#endif
static void pb_checksum__block(const uint8_t *d, uint32_t n, uint32_t *a, uint32_t *b)
{
  uint32_t s1[PB_CK_LANES] = {0}, s2[PB_CK_LANES] = {0};
  const uint32_t T = n / PB_CK_LANES, r = n - PB_CK_LANES * T;
  for (uint32_t t = 0; t < T; t++, d += 2 * PB_CK_LANES)
    for (int l = 0; l < PB_CK_LANES; l++) {
      uint16_t w;
      memcpy(&w, d + 2 * l, 2); /* big-endian word */
      s2[l] += s1[l];
      s1[l] += (uint32_t)(uint16_t)((w << 8) | (w >> 8));
    }
  uint32_t A = 0, S2 = 0, LA = 0;
  for (int l = 0; l < PB_CK_LANES; l++) {
    A += s1[l];
    S2 += s2[l];
    LA += (uint32_t)l * s1[l];
  }
  uint32_t B = PB_CK_LANES * S2 + PB_CK_LANES * A - LA + r * A;
  for (uint32_t i = 0; i < r; i++) {
    uint32_t w = ((uint32_t)d[2 * i] << 8) | (uint32_t)d[2 * i + 1];
    A += w;
    B += (r - i) * w;
  }
  *a = A;
  *b = B;
}

uint32_t pb_checksum_fletcher32(const void *data, size_t len)
{
  const uint8_t *d = data;
  size_t words = len / 2;
  uint32_t sum1 = 0, sum2 = 0;
  while (words) {
    uint32_t n = words > 360 ? 360 : (uint32_t)words, a, b;
    pb_checksum__block(d, n, &a, &b);
    sum2 += n * sum1 + b;
    sum1 += a;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    d += 2 * (size_t)n;
    words -= n;
  }
  if (len % 2) { /* the odd last byte is the high half of a word */
    sum1 += (uint32_t)d[0] << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return (sum2 << 16) | sum1;
}

int pb_checksum_fletcher32_ok(const void *data, size_t len, const void *stored)
{
  const uint8_t *t = stored;
  uint32_t v = (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
  uint32_t f = pb_checksum_fletcher32(data, len);
  /* HDF5 before 1.6.3: the bytes of the host's (little-endian) value swapped in pairs */
  uint32_t reversed = ((f & 0x00ff00ffu) << 8) | ((f >> 8) & 0x00ff00ffu);
  return v == f || v == reversed;
}

/* ---------------------------------------------------------------- SHA-256 */

static void pb_checksum__sha256(const void *data, size_t n, uint8_t digest[SHA256_DIGEST_SIZE])
{
  struct sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, n, data);
  sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
}

uint64_t pb_checksum_sha256_key(const char *text)
{
  uint8_t d[SHA256_DIGEST_SIZE];
  pb_checksum__sha256(text, strlen(text), d);
  uint64_t k = 0;
  for (int i = 0; i < 8; i++) k = (k << 8) | d[i];
  return k;
}

void pb_checksum_sha256_hex(const void *data, size_t n, char hex[65])
{
  uint8_t d[SHA256_DIGEST_SIZE];
  pb_checksum__sha256(data, n, d);
  for (int i = 0; i < SHA256_DIGEST_SIZE; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* -------------------------------------------------------------- XXH3-128 */

/* The canonical (big-endian) bytes, as `xxhsum -H2` prints them. */
static void pb_checksum__xxh_hex(const XXH128_canonical_t *c, char hex[65])
{
  for (size_t i = 0; i < sizeof c->digest; i++) snprintf(hex + 2 * i, 3, "%02x", c->digest[i]);
}

int pb_checksum_xxh128_file(const char *path, char hex[65])
{
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    pb_error_set("%s: cannot read: %s", path, strerror(errno));
    return PB_FAIL;
  }
  XXH3_state_t *st = XXH3_createState();
  if (!st) {
    fclose(fp);
    pb_error_set("out of memory hashing %s", path);
    return PB_FAIL;
  }
  XXH3_128bits_reset(st);
  enum { BUF = 1 << 20 };
  uint8_t *buf = pb_malloc(BUF);
  size_t got;
  while ((got = fread(buf, 1, BUF, fp)) > 0) XXH3_128bits_update(st, buf, got);
  free(buf);
  int bad = ferror(fp);
  fclose(fp);
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
  XXH3_freeState(st);
  if (bad) {
    pb_error_set("%s: read error", path);
    return PB_FAIL;
  }
  pb_checksum__xxh_hex(&c, hex);
  return PB_OK;
}

void pb_checksum_xxh128_hex(const void *data, size_t n, char hex[65])
{
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(n ? data : "", n));
  pb_checksum__xxh_hex(&c, hex);
}
