/* A minimal Kokkos Tools library for tests: records every profiling region
 * (name, how often, the region it was pushed in) and prints them when Kokkos
 * finalizes, one line per (parent, name): "region PARENT > NAME xCOUNT", then
 * "regions balanced" or "regions UNBALANCED (depth N, pops without a push M)".
 * Loaded by Kokkos through KOKKOS_TOOLS_LIBS (Kokkos 4) or
 * KOKKOS_PROFILE_LIBRARY (Kokkos 3). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { max_depth = 64, max_pairs = 256, name_length = 96 };

static char stack[max_depth][name_length];
static int depth = 0, overflow = 0, stray_pops = 0;
static struct {
  char parent[name_length], name[name_length];
  long count;
} pairs[max_pairs];
static int num_pairs = 0;

static void copy_name(char* to, const char* from) {
  strncpy(to, from, name_length - 1);
  to[name_length - 1] = '\0';
}

void kokkosp_init_library(const int load_sequence, const uint64_t interface_version,
                          const uint32_t device_count, void* device_info) {
  (void)load_sequence;
  (void)interface_version;
  (void)device_count;
  (void)device_info;
}

void kokkosp_push_profile_region(const char* name) {
  const char* parent = depth > 0 && depth <= max_depth ? stack[depth - 1] : "-";
  int k = 0;
  while (k < num_pairs && (strcmp(pairs[k].parent, parent) != 0 || strcmp(pairs[k].name, name) != 0)) ++k;
  if (k == num_pairs && num_pairs < max_pairs) {
    copy_name(pairs[k].parent, parent);
    copy_name(pairs[k].name, name);
    pairs[k].count = 0;
    ++num_pairs;
  }
  if (k < num_pairs) ++pairs[k].count;
  if (depth < max_depth) copy_name(stack[depth], name);
  else overflow = 1;
  ++depth;
}

void kokkosp_pop_profile_region(void) {
  if (depth == 0) ++stray_pops;
  else --depth;
}

void kokkosp_finalize_library(void) {
  for (int k = 0; k < num_pairs; ++k)
    printf("region %s > %s x%ld\n", pairs[k].parent, pairs[k].name, pairs[k].count);
  if (depth == 0 && stray_pops == 0 && !overflow) printf("regions balanced\n");
  else printf("regions UNBALANCED (depth %d, pops without a push %d)\n", depth, stray_pops);
  fflush(stdout);
}
