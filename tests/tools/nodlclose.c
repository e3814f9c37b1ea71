/* LD_PRELOAD shim for the sanitizer runs (build-aux/check-sanitize.sh):
 * dlclose() keeps every shared object mapped.  Open MPI, PMIx and hwloc
 * unload their plugins at MPI_Finalize; allocations those plugins keep until
 * exit would otherwise reach LeakSanitizer with "<unknown module>" frames,
 * which no suppression can name.  Kept loaded, their frames name the plugin
 * and tests/fuzz/lsan.supp suppresses them by library; every other leak is
 * still reported. */
int dlclose(void *handle)
{
  (void)handle;
  return 0;
}
