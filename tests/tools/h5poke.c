/* Test helper: damage an HDF5 file in controlled ways, to show that pairbound
 * notices.
 *   h5poke FILE DATASET INDEX VALUE   overwrite element INDEX (row-major over
 *                                     every dimension) through HDF5, converting
 *                                     VALUE to the dataset's type; prints the old value
 *   h5poke --flip FILE DATASET [BYTE BIT]  flip one bit (BIT of byte BYTE; by
 *                                     default 0x10 of the middle byte) in the
 *                                     stored bytes of the dataset's first chunk,
 *                                     or of its contiguous data, behind HDF5's back
 *   h5poke --attr FILE OBJECT NAME N  set integer attribute NAME of OBJECT to N
 *                                     (created as int32 when missing)
 *   h5poke --attr-flip FILE OBJECT NAME BYTE BIT  flip one bit of an attribute's
 *                                     value as stored (a role's padding, say)
 *   h5poke --attr-str FILE OBJECT NAME TEXT  replace (or create) attribute NAME
 *                                     as a string
 *   h5poke --attr-del FILE OBJECT NAME       delete attribute NAME
 *   h5poke --str FILE DATASET INDEX TEXT     overwrite string element INDEX of a
 *                                     1-D dataset through HDF5 (TEXT cut to its width)
 *   h5poke --truncate FILE DATASET N  keep the first N elements of a 1-D dataset
 *                                     (recreated with the same type and attributes,
 *                                     as h5py's `del f[D]; f[D] = old[:N]` and a copy
 *                                     of its attributes would)
 *   h5poke --unlink FILE PATH         remove the link PATH (a dataset or group)
 *   h5poke --digest FILE OBJECT       (re)write OBJECT's metadata checksum, attribute
 *                                     xxh3_128, from its values as they are now:
 *                                     written here from docs/store.md ("Integrity"),
 *                                     not from pairbound's code, so the tests check
 *                                     the documented form and can damage a store
 *                                     behind a valid checksum */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <xxhash.h>

static int poke(const char *file, const char *dset, hsize_t idx, double value)
{
  double old = 0.0;
  hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return 1;
  hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
  if (d < 0) return 1;
  hid_t fs = H5Dget_space(d);
  int nd = H5Sget_simple_extent_ndims(fs);
  hsize_t dims[8], at[8], one[8];
  H5Sget_simple_extent_dims(fs, dims, NULL);
  for (int k = nd - 1; k >= 0; k--) {
    at[k] = idx % dims[k];
    idx /= dims[k];
    one[k] = 1;
  }
  hid_t ms = H5Screate_simple(nd, one, NULL);
  int rc = H5Sselect_hyperslab(fs, H5S_SELECT_SET, at, NULL, one, NULL) < 0 ||
           H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, &old) < 0 ||
           H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, &value) < 0;
  printf("%.17g\n", old);
  H5Sclose(ms);
  H5Sclose(fs);
  H5Dclose(d);
  return H5Fclose(f) < 0 || rc ? 1 : 0;
}

static int flip(const char *file, const char *dset, long byte, int bit)
{
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return 1;
  hid_t d = H5Dopen2(f, dset, H5P_DEFAULT), fs = H5Dget_space(d), dcpl = H5Dget_create_plist(d);
  haddr_t addr = HADDR_UNDEF;
  hsize_t size = 0;
  unsigned mask = 0;
  int rc = d < 0 || dcpl < 0;
  if (!rc && H5Pget_layout(dcpl) == H5D_CHUNKED)
    rc = H5Dget_chunk_info(d, fs, 0, NULL, &mask, &addr, &size) < 0;
  else if (!rc)
    addr = H5Dget_offset(d), size = H5Dget_storage_size(d);
  rc = rc || addr == HADDR_UNDEF || size == 0 || (byte >= 0 && (hsize_t)byte >= size);
  H5Pclose(dcpl);
  H5Sclose(fs);
  H5Dclose(d);
  H5Fclose(f);
  if (rc) return 1;
  const long at = (long)addr + (byte >= 0 ? byte : (long)(size / 2));
  FILE *fp = fopen(file, "r+b");
  if (!fp || fseek(fp, at, SEEK_SET) != 0) return 1;
  int c = fgetc(fp);
  fseek(fp, at, SEEK_SET);
  fputc(c ^ (1 << bit), fp);
  return fclose(fp) != 0;
}

/* String element INDEX of a 1-D dataset of fixed-length strings := TEXT. */
static int str(const char *file, const char *dset, hsize_t idx, const char *text)
{
  hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return 1;
  hid_t d = H5Dopen2(f, dset, H5P_DEFAULT), t = H5Dget_type(d), fs = H5Dget_space(d);
  const size_t w = H5Tget_size(t);
  char *buf = calloc(w + 1, 1);
  strncpy(buf, text, w);
  hsize_t one = 1;
  hid_t ms = H5Screate_simple(1, &one, NULL);
  int rc = H5Sselect_hyperslab(fs, H5S_SELECT_SET, &idx, NULL, &one, NULL) < 0 ||
           H5Dwrite(d, t, ms, fs, H5P_DEFAULT, buf) < 0;
  free(buf);
  H5Sclose(ms), H5Sclose(fs), H5Tclose(t), H5Dclose(d);
  return H5Fclose(f) < 0 || rc ? 1 : 0;
}

static int attr_replace(const char *file, const char *obj, const char *name, const char *text);

struct copy_ctx {
  hid_t to;
  int rc;
};

static herr_t copy_attr(hid_t from, const char *name, const H5A_info_t *info, void *op)
{
  struct copy_ctx *c = op;
  (void)info;
  hid_t a = H5Aopen(from, name, H5P_DEFAULT), t = H5Aget_type(a), sp = H5Aget_space(a);
  const size_t n = (size_t)H5Sget_simple_extent_npoints(sp) * H5Tget_size(t);
  void *buf = calloc(n ? n : 1, 1);
  hid_t b = -1;
  if (H5Aread(a, t, buf) < 0 || (b = H5Acreate2(c->to, name, t, sp, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
      H5Awrite(b, t, buf) < 0)
    c->rc = 1;
  if (b >= 0) H5Aclose(b);
  free(buf);
  H5Sclose(sp), H5Tclose(t), H5Aclose(a);
  return 0;
}

/* A 1-D dataset cut to its first N elements: read, deleted, written again with its attributes. */
static int truncate_dset(const char *file, const char *dset, hsize_t n)
{
  hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return 1;
  hid_t d = H5Dopen2(f, dset, H5P_DEFAULT), t = H5Dget_type(d), fs = H5Dget_space(d);
  hsize_t dim = 0;
  H5Sget_simple_extent_dims(fs, &dim, NULL);
  char *buf = calloc(dim ? dim : 1, H5Tget_size(t)), tmp[] = "/h5poke_tmp";
  int rc = n > dim || H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0;
  hid_t sp = H5Screate_simple(1, &n, NULL), nd = -1;
  if (!rc) rc = (nd = H5Dcreate2(f, tmp, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0;
  if (!rc && n) rc = H5Dwrite(nd, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0;
  struct copy_ctx c = {nd, 0};
  if (!rc) rc = H5Aiterate2(d, H5_INDEX_NAME, H5_ITER_INC, NULL, copy_attr, &c) < 0 || c.rc;
  H5Sclose(fs), H5Dclose(d);
  if (nd >= 0) H5Dclose(nd);
  if (!rc) rc = H5Ldelete(f, dset, H5P_DEFAULT) < 0 || H5Lmove(f, tmp, f, dset, H5P_DEFAULT, H5P_DEFAULT) < 0;
  free(buf);
  H5Sclose(sp), H5Tclose(t);
  return H5Fclose(f) < 0 || rc ? 1 : 0;
}

/* Append "NAME VALUE\n" for integer attribute NAME of @p o to @p p; returns the new end. */
static char *attr_line(hid_t o, const char *name, char *p)
{
  int v = 0;
  hid_t a = H5Aopen(o, name, H5P_DEFAULT);
  if (a >= 0) H5Aread(a, H5T_NATIVE_INT, &v), H5Aclose(a);
  return p + sprintf(p, "%s %d\n", name, v);
}

/* Attribute NAME of @p o as a string (static buffer; "" when absent), *have whether it exists. */
static const char *attr_text(hid_t o, const char *name, int *have)
{
  static char text[65536];
  text[0] = '\0';
  *have = H5Aexists(o, name) > 0;
  if (!*have) return text;
  hid_t a = H5Aopen(o, name, H5P_DEFAULT), t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, sizeof text - 1);
  H5Aread(a, t, text);
  H5Tclose(t), H5Aclose(a);
  return text;
}

/* OBJECT's canonical bytes (docs/store.md, "Integrity") into a malloc'ed buffer, their number in *n. */
static char *canonical(hid_t f, const char *obj, size_t *n)
{
  char *out = calloc(1, 1 << 20), *p = out;
  int have;
  hid_t g = H5Oopen(f, obj, H5P_DEFAULT);
  if (g < 0) return free(out), NULL;
  if (H5Iget_type(g) != H5I_GROUP) H5Oclose(g);
  else {
    int schema = 0;
    hid_t r = H5Oopen(f, "/", H5P_DEFAULT), a = H5Aopen(r, "schema_version", H5P_DEFAULT);
    if (a >= 0) H5Aread(a, H5T_NATIVE_INT, &schema), H5Aclose(a);
    H5Oclose(r);
    if (!strcmp(obj, "/")) {
      p += sprintf(p, "format %s\n", attr_text(g, "format", &have));
      p = attr_line(g, "topk", attr_line(g, "schema_version", p));
    } else
      p = attr_line(g, "clean_index", attr_line(g, "n_classes", p));
    const char *seed = attr_text(g, "seed_values", &have);
    if (have) p += sprintf(p, "seed_values %s\n", seed);
    if (schema >= 3 && !strcmp(obj, "/")) { /* the summaries of the sources (all alike; the first by name) */
      char first[1024] = "";
      H5Lget_name_by_idx(f, "/sources", H5_INDEX_NAME, H5_ITER_INC, 0, first, sizeof first, H5P_DEFAULT);
      hid_t all = H5Gopen2(f, "/sources", H5P_DEFAULT), s0 = first[0] && all >= 0 ? H5Gopen2(all, first, H5P_DEFAULT) : -1;
      if (all >= 0) H5Gclose(all);
      int e = s0 >= 0 && H5Lexists(s0, "entropy", H5P_DEFAULT) > 0, c = s0 >= 0 && H5Lexists(s0, "collision", H5P_DEFAULT) > 0;
      if (e || c) p += sprintf(p, "summaries%s%s\n", e ? " entropy" : "", c ? " collision" : "");
      if (s0 >= 0) H5Gclose(s0);
    } else if (schema >= 3 && H5Lexists(g, "label_set_offsets", H5P_DEFAULT) > 0)
      p += sprintf(p, "label_sets 1\n");
    H5Oclose(g);
    *n = (size_t)(p - out);
    return out;
  }
  hid_t d = H5Dopen2(f, obj, H5P_DEFAULT), t = H5Dget_type(d), sp = H5Dget_space(d);
  const hsize_t dim = (hsize_t)H5Sget_simple_extent_npoints(sp);
  const size_t w = H5Tget_size(t);
  free(out);
  out = calloc(dim * (w + 1) + 1, 1);
  p = out;
  if (H5Tget_class(t) == H5T_STRING) { /* each value and one NUL */
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, w + 1);
    char *buf = calloc(dim ? dim : 1, w + 1);
    H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    for (hsize_t i = 0; i < dim; i++) p += sprintf(p, "%s", buf + i * (w + 1)) + 1;
    free(buf);
    H5Tclose(mt);
  } else { /* label: int32 little-endian; split: one byte */
    H5Dread(d, w == 1 ? H5T_STD_U8LE : H5T_STD_I32LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, p);
    p += dim * (w == 1 ? 1 : 4);
  }
  H5Sclose(sp), H5Tclose(t), H5Dclose(d);
  *n = (size_t)(p - out);
  return out;
}

static int digest(const char *file, const char *obj)
{
  hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return 1;
  size_t n = 0;
  char *bytes = canonical(f, obj, &n), hex[33];
  H5Fclose(f);
  if (!bytes) return 1;
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(bytes, n));
  free(bytes);
  for (int i = 0; i < 16; i++) sprintf(hex + 2 * i, "%02x", c.digest[i]);
  return attr_replace(file, obj, "xxh3_128", hex);
}

static int attr(const char *file, const char *obj, const char *name, int value)
{
  hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return 1;
  /* through the object: HDF5 1.10's H5Aopen_by_name cannot write a group's attribute */
  hid_t o = H5Oopen(f, obj, H5P_DEFAULT), sp = H5Screate(H5S_SCALAR), a = -1;
  if (o >= 0) a = H5Aexists(o, name) > 0 ? H5Aopen(o, name, H5P_DEFAULT)
                                         : H5Acreate2(o, name, H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
  int rc = a < 0 || H5Awrite(a, H5T_NATIVE_INT, &value) < 0;
  if (a >= 0) H5Aclose(a);
  if (o >= 0) H5Oclose(o);
  H5Sclose(sp);
  return H5Fclose(f) < 0 || rc ? 1 : 0;
}

/* Flip bit BIT of byte BYTE of attribute NAME's value as stored (its own type: no conversion). */
static int attr_flip(const char *file, const char *obj, const char *name, long byte, int bit)
{
  hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return 1;
  hid_t o = H5Oopen(f, obj, H5P_DEFAULT), a = o < 0 ? -1 : H5Aopen(o, name, H5P_DEFAULT);
  hid_t t = a < 0 ? -1 : H5Aget_type(a), sp = a < 0 ? -1 : H5Aget_space(a);
  const long n = sp < 0 ? 0 : (long)H5Sget_simple_extent_npoints(sp) * (long)H5Tget_size(t);
  unsigned char *buf = calloc(n ? (size_t)n : 1, 1);
  int rc = a < 0 || byte < 0 || byte >= n || H5Aread(a, t, buf) < 0;
  if (!rc) {
    buf[byte] ^= (unsigned char)(1 << bit);
    rc = H5Awrite(a, t, buf) < 0;
  }
  free(buf);
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
  if (o >= 0) H5Oclose(o);
  return H5Fclose(f) < 0 || rc ? 1 : 0;
}

/* Replace attribute NAME of OBJECT by the string TEXT, or delete it (text NULL). */
static int attr_replace(const char *file, const char *obj, const char *name, const char *text)
{
  hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return 1;
  int rc = H5Aexists_by_name(f, obj, name, H5P_DEFAULT) > 0 ? H5Adelete_by_name(f, obj, name, H5P_DEFAULT) < 0 : !text;
  if (!rc && text) {
    hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), o = H5Oopen(f, obj, H5P_DEFAULT);
    H5Tset_size(t, strlen(text) + 1);
    hid_t a = H5Acreate2(o, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    rc = a < 0 || H5Awrite(a, t, text) < 0;
    if (a >= 0) H5Aclose(a);
    H5Oclose(o), H5Sclose(sp), H5Tclose(t);
  }
  return H5Fclose(f) < 0 || rc ? 1 : 0;
}

/* Remove link PATH (a dataset or group) from FILE. */
static int unlink_path(const char *file, const char *path)
{
  hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return 1;
  const int rc = H5Ldelete(f, path, H5P_DEFAULT) < 0;
  return H5Fclose(f) < 0 || rc ? 1 : 0;
}

int main(int argc, char **argv)
{
  if (argc == 4 && strcmp(argv[1], "--unlink") == 0) return unlink_path(argv[2], argv[3]);
  if (argc == 6 && strcmp(argv[1], "--attr-str") == 0) return attr_replace(argv[2], argv[3], argv[4], argv[5]);
  if (argc == 5 && strcmp(argv[1], "--attr-del") == 0) return attr_replace(argv[2], argv[3], argv[4], NULL);
  if (argc == 4 && strcmp(argv[1], "--flip") == 0) return flip(argv[2], argv[3], -1, 4);
  if (argc == 6 && strcmp(argv[1], "--flip") == 0) return flip(argv[2], argv[3], atol(argv[4]), atoi(argv[5]) & 7);
  if (argc == 6 && strcmp(argv[1], "--str") == 0) return str(argv[2], argv[3], strtoull(argv[4], NULL, 10), argv[5]);
  if (argc == 5 && strcmp(argv[1], "--truncate") == 0) return truncate_dset(argv[2], argv[3], strtoull(argv[4], NULL, 10));
  if (argc == 4 && strcmp(argv[1], "--digest") == 0) return digest(argv[2], argv[3]);
  if (argc == 7 && strcmp(argv[1], "--attr-flip") == 0)
    return attr_flip(argv[2], argv[3], argv[4], atol(argv[5]), atoi(argv[6]) & 7);
  if (argc == 6 && strcmp(argv[1], "--attr") == 0) return attr(argv[2], argv[3], argv[4], atoi(argv[5]));
  if (argc == 5) return poke(argv[1], argv[2], strtoull(argv[3], NULL, 10), strtod(argv[4], NULL));
  fprintf(stderr, "usage: h5poke FILE DATASET INDEX VALUE | --flip FILE DATASET [BYTE BIT] | --attr FILE OBJECT NAME N\n"
                  "       | --attr-str FILE OBJECT NAME TEXT | --attr-del FILE OBJECT NAME | --str FILE DATASET INDEX TEXT\n"
                  "       | --truncate FILE DATASET N | --unlink FILE PATH | --digest FILE OBJECT | --attr-flip FILE OBJECT NAME BYTE BIT\n");
  return 2;
}
