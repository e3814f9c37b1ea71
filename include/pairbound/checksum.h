/* Checksums and hashes (src/core/checksum.c): HDF5's Fletcher32 of stored
 * chunks, bit-exact with HDF5's; SHA-256 for ordering keys and the
 * checkpoints' self-check; XXH3-128 for the checksums of stores, outputs and
 * block files (docs/run.md, "Resume"). */
#ifndef PAIRBOUND_CHECKSUM_H
#define PAIRBOUND_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/**
 * HDF5's Fletcher32 of @p len bytes (H5_checksum_fletcher32 in HDF5's
 * H5checksum.c): 16-bit big-endian words summed into two 32-bit sums that are
 * folded to 17 bits every 360 words, an odd last byte taken as the high half
 * of a word, then both folded once more; returns (sum2 << 16) | sum1.
 * @param data the bytes (any alignment)
 * @param len their number; 0 gives 0
 */
uint32_t pb_checksum_fletcher32(const void *data, size_t len);

/**
 * Whether data written through HDF5's Fletcher32 filter is intact: the filter
 * appends the checksum of a chunk's @p len bytes to them, little-endian
 * (UINT32ENCODE in H5Zfletcher32.c).  As HDF5's reader does, the value with
 * its bytes swapped in pairs (written by HDF5 before 1.6.3 on little-endian
 * machines) is accepted too.
 * @param data the chunk's bytes without the checksum
 * @param len their number
 * @param stored the 4 bytes stored after them
 * @return 1 when they match, 0 when not
 */
int pb_checksum_fletcher32_ok(const void *data, size_t len, const void *stored);

/** SHA-256 of @p text, its first 8 bytes as a big-endian integer: an ordering key. */
uint64_t pb_checksum_sha256_key(const char *text);
/** SHA-256 of @p n bytes as 64 hex digits. */
void pb_checksum_sha256_hex(const void *data, size_t n, char hex[65]);

/** XXH3-128 of a file's bytes as 32 hex digits, the canonical order that
 * `xxhsum -H2` prints (streamed; any size): the checksum of stores and
 * outputs in checkpoints and provenance.  PB_FAIL with a message when the
 * file cannot be read. */
int pb_checksum_xxh128_file(const char *path, char hex[65]);
/** pb_checksum_xxh128_file of @p n bytes in memory. */
void pb_checksum_xxh128_hex(const void *data, size_t n, char hex[65]);

#endif /* PAIRBOUND_CHECKSUM_H */
