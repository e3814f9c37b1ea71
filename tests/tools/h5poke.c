/* Test helper: damage an HDF5 file in controlled ways, to show that pairbound
 * notices.
 *   h5poke FILE DATASET INDEX VALUE   overwrite element INDEX (row-major over
 *                                     every dimension) through HDF5, converting
 *                                     VALUE to the dataset's type; prints the old value
 *   h5poke --flip FILE DATASET        flip one bit in the stored bytes of the
 *                                     dataset's first chunk, behind HDF5's back
 *   h5poke --attr FILE OBJECT NAME N  set integer attribute NAME of OBJECT to N
 *   h5poke --attr-str FILE OBJECT NAME TEXT  replace attribute NAME by a string
 *   h5poke --attr-del FILE OBJECT NAME       delete attribute NAME */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

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

static int flip(const char *file, const char *dset)
{
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return 1;
  hid_t d = H5Dopen2(f, dset, H5P_DEFAULT), fs = H5Dget_space(d);
  haddr_t addr = HADDR_UNDEF;
  hsize_t size = 0;
  unsigned mask = 0;
  int rc = d < 0 || H5Dget_chunk_info(d, fs, 0, NULL, &mask, &addr, &size) < 0 || addr == HADDR_UNDEF;
  H5Sclose(fs);
  H5Dclose(d);
  H5Fclose(f);
  if (rc) return 1;
  FILE *fp = fopen(file, "r+b");
  if (!fp || fseek(fp, (long)(addr + size / 2), SEEK_SET) != 0) return 1;
  int c = fgetc(fp);
  fseek(fp, (long)(addr + size / 2), SEEK_SET);
  fputc(c ^ 0x10, fp);
  return fclose(fp) != 0;
}

static int attr(const char *file, const char *obj, const char *name, int value)
{
  hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return 1;
  /* through the object: HDF5 1.10's H5Aopen_by_name cannot write a group's attribute */
  hid_t o = H5Oopen(f, obj, H5P_DEFAULT), a = o < 0 ? -1 : H5Aopen(o, name, H5P_DEFAULT);
  int rc = a < 0 || H5Awrite(a, H5T_NATIVE_INT, &value) < 0;
  if (a >= 0) H5Aclose(a);
  if (o >= 0) H5Oclose(o);
  return H5Fclose(f) < 0 || rc ? 1 : 0;
}

/* Replace attribute NAME of OBJECT by the string TEXT, or delete it (text NULL). */
static int attr_replace(const char *file, const char *obj, const char *name, const char *text)
{
  hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return 1;
  int rc = H5Adelete_by_name(f, obj, name, H5P_DEFAULT) < 0;
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

int main(int argc, char **argv)
{
  if (argc == 6 && strcmp(argv[1], "--attr-str") == 0) return attr_replace(argv[2], argv[3], argv[4], argv[5]);
  if (argc == 5 && strcmp(argv[1], "--attr-del") == 0) return attr_replace(argv[2], argv[3], argv[4], NULL);
  if (argc == 4 && strcmp(argv[1], "--flip") == 0) return flip(argv[2], argv[3]);
  if (argc == 6 && strcmp(argv[1], "--attr") == 0) return attr(argv[2], argv[3], argv[4], atoi(argv[5]));
  if (argc == 5) return poke(argv[1], argv[2], strtoull(argv[3], NULL, 10), strtod(argv[4], NULL));
  fprintf(stderr, "usage: h5poke FILE DATASET INDEX VALUE | --flip FILE DATASET | --attr FILE OBJECT NAME N\n"
                  "       | --attr-str FILE OBJECT NAME TEXT | --attr-del FILE OBJECT NAME\n");
  return 2;
}
