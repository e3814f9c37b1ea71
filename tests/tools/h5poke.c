/* Test helper: overwrite one element of a 1-D float64 dataset in place, to
 * show that `pairbound verify --against` catches a corrupted bound.
 * usage: h5poke FILE DATASET INDEX VALUE   (prints the old value) */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <hdf5.h>

int main(int argc, char **argv)
{
  if (argc != 5) {
    fprintf(stderr, "usage: h5poke FILE DATASET INDEX VALUE\n");
    return 2;
  }
  hsize_t idx = strtoull(argv[3], NULL, 10), one = 1;
  double value = strtod(argv[4], NULL), old = 0.0;
  hid_t f = H5Fopen(argv[1], H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return 1;
  hid_t d = H5Dopen2(f, argv[2], H5P_DEFAULT);
  if (d < 0) return 1;
  hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &one, NULL);
  int rc = H5Sselect_hyperslab(fs, H5S_SELECT_SET, &idx, NULL, &one, NULL) < 0 ||
           H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, &old) < 0 ||
           H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, &value) < 0;
  printf("%.17g\n", old);
  H5Sclose(ms);
  H5Sclose(fs);
  H5Dclose(d);
  return H5Fclose(f) < 0 || rc ? 1 : 0;
}
