// Layout functions of the irregular tests: block sizes as functions of the
// offset and of the process coordinates (obeying the rule of docs/design/irregular.md#the-signature-rule:
// block i's size may depend on the coordinates only in dimensions where
// v_ij == 0), each block described by one of several datatype shapes that
// differ between blocks, sides and processes (only signatures must match).
#pragma once

#include "irregular_support.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace iso_irregular_test {

/// Number of ints of block i at the process at `coords`.
using SizeFn = std::function<long(int block, const std::vector<int>& coords)>;

inline std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 32;
  return x;
}

constexpr int num_block_kinds = 8;

/// A block of n ints described in shape `kind` (0..num_block_kinds-1).
inline BlockSpec block_of(long n_long, int kind) {
  const int n = static_cast<int>(n_long);
  BlockSpec b;
  switch (kind % num_block_kinds) {
    case 0: b.type = TypeSpec::make_int(); b.count = n; break;
    case 1: b.type = TypeSpec::make_contiguous(n); b.count = 1; break;           // count 1 of n (n may be 0)
    case 2: b.type = TypeSpec::make_vector(n, 1, 2); b.count = 1; break;         // holes between ints
    case 3: b.type = TypeSpec::make_reversed(n); b.count = 1; break;             // negative true lb
    case 4: b.type = TypeSpec::make_resized(3); b.count = n; break;              // extent > size
    case 5: b.type = TypeSpec::make_shifted(1, 2); b.count = n; break;           // true lb > lb
    case 6:
      if (n % 2 == 0) {
        b.type = TypeSpec::make_vector(2, 1, 3);  // 2 ints per instance, instances overlap in extent
        b.count = n / 2;
      } else {
        b.type = TypeSpec::make_int();
        b.count = n;
      }
      break;
    default:
      if (n > 0) {
        const int sizes[1] = {n + 3}, subsizes[1] = {n}, starts[1] = {2};
        b.type = TypeSpec::make_subarray(1, sizes, subsizes, starts);
        b.count = 1;
      } else {
        b.type = TypeSpec::make_vector(0, 1, 1);
        b.count = 3;  // count 3 of an empty type
      }
      break;
  }
  return b;
}

/// alltoallw layout: block i has size(i, coords) ints on both sides; the shape
/// of each block depends on (seed, block, side, rank) when `vary_by_rank`, else
/// on (seed, block, side) only.
inline LayoutFn w_layout(int s, SizeFn size, std::uint64_t seed, bool vary_by_rank = true, long gap = 12) {
  return [=](const std::vector<int>& coords, int rank) {
    ProcessLayout layout;
    for (int side = 0; side < 2; ++side) {
      SideSpec& spec = side == 0 ? layout.send : layout.recv;
      for (int i = 0; i < s; ++i) {
        const std::uint64_t who = vary_by_rank ? static_cast<std::uint64_t>(rank) : 0;
        const int kind = static_cast<int>(mix(mix(seed, static_cast<std::uint64_t>(i) * 2 + static_cast<std::uint64_t>(side)), who) %
                                          num_block_kinds);
        spec.blocks.push_back(block_of(size(i, coords), kind));
      }
      place_blocks(spec, gap);
    }
    return layout;
  };
}

/// Type pairs for alltoallv: every member of a family has the same signature
/// per element (1 int, or 2 ints).
inline TypeSpec v_type(int family, int member) {
  if (family == 0) {
    switch (member % 5) {
      case 0: return TypeSpec::make_int();
      case 1: return TypeSpec::make_resized(2);
      case 2: return TypeSpec::make_resized(3);
      case 3: return TypeSpec::make_shifted(1, 1);
      default: return TypeSpec::make_shifted(0, 3);
    }
  }
  switch (member % 4) {
    case 0: return TypeSpec::make_contiguous(2);
    case 1: return TypeSpec::make_vector(2, 1, 2);
    case 2: return TypeSpec::make_reversed(2);
    default: return TypeSpec::make_vector(1, 2, 3);
  }
}

/// alltoallv layout: block i has size(i, coords) elements of this process's
/// send (receive) type; the types are members of `family`, chosen per (seed,
/// side, rank).
inline LayoutFn v_layout(int s, SizeFn size, int family, std::uint64_t seed) {
  return [=](const std::vector<int>& coords, int rank) {
    ProcessLayout layout;
    for (int side = 0; side < 2; ++side) {
      SideSpec& spec = side == 0 ? layout.send : layout.recv;
      const TypeSpec type = v_type(family, static_cast<int>(mix(mix(seed, static_cast<std::uint64_t>(side)),
                                                                static_cast<std::uint64_t>(rank)) % 20));
      for (int i = 0; i < s; ++i) {
        BlockSpec b;
        b.type = type;
        b.count = static_cast<int>(size(i, coords));
        spec.blocks.push_back(b);
      }
      place_blocks(spec, 2 * type.extent() + 4, type.extent());
    }
    return layout;
  };
}

/// m^(d - nonzeros(v_i)): the paper's Figure 3 sizes.
inline SizeFn figure3(std::vector<std::vector<int>> offsets, int m) {
  return [offsets = std::move(offsets), m](int i, const std::vector<int>&) {
    return figure3_size(offsets[static_cast<std::size_t>(i)], m);
  };
}

/// base + sum over j with v_ij == 0 of weight*coords[j] (uneven decomposition).
inline SizeFn uneven(std::vector<std::vector<int>> offsets, long base, long weight) {
  return [offsets = std::move(offsets), base, weight](int i, const std::vector<int>& coords) {
    long n = base;
    const auto& v = offsets[static_cast<std::size_t>(i)];
    for (std::size_t j = 0; j < v.size(); ++j)
      if (v[j] == 0) n += weight * coords[j];
    return n;
  };
}

}  // namespace iso_irregular_test
