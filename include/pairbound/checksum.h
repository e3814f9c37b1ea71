/* Checksums of stored bytes, bit-exact with HDF5's (src/core/checksum.c). */
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

#endif /* PAIRBOUND_CHECKSUM_H */
