/* A byte buffer that one rank fills and every rank of a communicator reads
 * back in the same order (src/core/pack.c): how a structure built on one rank
 * (ingest's dictionaries after pass 1) reaches the others.  Values travel in
 * the host's own representation: every rank of a job runs the same binary on
 * the same architecture. */
#ifndef PAIRBOUND_PACK_H
#define PAIRBOUND_PACK_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "pairbound/meta.h"

struct pb_pack {
  char *buf;
  size_t n, cap;  /* bytes written, room */
  size_t at;      /* bytes read back */
  int short_read; /* a read went past the end: every later read gives zeros */
};

/** Append @p n bytes. */
void pb_pack_put(struct pb_pack *p, const void *v, size_t n);
void pb_pack_i32(struct pb_pack *p, int32_t v);
void pb_pack_i64(struct pb_pack *p, int64_t v);
/** A string or NULL (which reads back as NULL). */
void pb_pack_str(struct pb_pack *p, const char *s);
/** @p n strings, none NULL. */
void pb_pack_strs(struct pb_pack *p, char *const *v, int32_t n);

/** Read back @p n bytes into @p v (zeros past the end). */
void pb_pack_get(struct pb_pack *p, void *v, size_t n);
int32_t pb_pack_get_i32(struct pb_pack *p);
int64_t pb_pack_get_i64(struct pb_pack *p);
/** A string allocated with pb_malloc, or NULL as packed. */
char *pb_pack_get_str(struct pb_pack *p);
/** @p n strings into a new array of them. */
char **pb_pack_get_strs(struct pb_pack *p, int32_t n);
/** A count packed with pb_pack_i64 of items of @p unit bytes each that follow it: 0 and a short read when it is
 * negative or more than the rest of the buffer could hold. */
int64_t pb_pack_get_count(struct pb_pack *p, size_t unit);
/** @p n bytes into a new block (NULL for none). */
void *pb_pack_get_block(struct pb_pack *p, size_t n);

/**
 * Collective: rank @p root's buffer to every rank of @p comm, where it
 * replaces the buffer's contents, to be read from the start.  Returns MPI's
 * error code.
 */
int pb_pack_bcast(struct pb_pack *p, int root, MPI_Comm comm);

/** Release the buffer. */
void pb_pack_free(struct pb_pack *p);

/** The whole of @p meta (its names, images, labels, splits, label sets, roles, seed values, provenance). */
void pb_pack_meta(struct pb_pack *p, const struct pb_meta *meta);
/** A metadata structure as packed, owned by the caller (pb_meta_free); PB_FAIL on a short buffer. */
int pb_pack_get_meta(struct pb_pack *p, struct pb_meta *meta);

#endif /* PAIRBOUND_PACK_H */
