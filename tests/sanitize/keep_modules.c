/* Preloaded into every process of a sanitized test run: dlclose does nothing,
   so the plugins Open MPI unloads at MPI_Finalize stay mapped until exit and
   LeakSanitizer can name the module of each allocation they made. Without it
   their leaks show as "<unknown module>", which no suppression can match. */
int dlclose(void* handle) {
  (void)handle;
  return 0;
}
