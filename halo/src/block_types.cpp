// Block descriptions and what the collectives need to know of their
// datatypes: sizes and extents, the one predefined type a block is made of,
// message datatypes over many blocks, and the flattening of a datatype into
// byte runs that small messages and local moves copy without MPI's datatype
// engine.
#include "operation_internal.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace iso::detail {

TypeInfo type_info(MPI_Datatype type) {
  TypeInfo info;
  MPI_Aint lb = 0;
  ISO_MPI_CHECK(MPI_Type_get_extent(type, &lb, &info.extent));
  ISO_MPI_CHECK(MPI_Type_get_true_extent(type, &info.true_lb, &info.true_extent));
  ISO_MPI_CHECK(MPI_Type_size(type, &info.size));
  return info;
}

// Lowest byte offset and byte span that `count` elements of a type touch.
std::pair<MPI_Aint, MPI_Aint> true_span(const TypeInfo& info, int count) {
  if (count == 0 || info.size == 0) return {0, 0};
  const MPI_Aint stride = static_cast<MPI_Aint>(count - 1) * info.extent;
  const MPI_Aint lowest = info.true_lb + std::min<MPI_Aint>(0, stride);
  const MPI_Aint span = info.true_extent + (stride < 0 ? -stride : stride);
  return {lowest, span};
}


MPI_Aint address_of(const void* pointer) {
  MPI_Aint address = 0;
  ISO_MPI_CHECK(MPI_Get_address(pointer, &address));
  return address;
}

// The one predefined type a datatype is built from, or MPI_DATATYPE_NULL when
// it mixes several (or uses a constructor we do not look into).
MPI_Datatype single_leaf_type(MPI_Datatype type, int depth) {
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  ISO_MPI_CHECK(MPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner));
  if (combiner == MPI_COMBINER_NAMED) return type;
  if (depth > 16) return MPI_DATATYPE_NULL;
  switch (combiner) {
    case MPI_COMBINER_DUP: case MPI_COMBINER_CONTIGUOUS: case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: case MPI_COMBINER_INDEXED: case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK: case MPI_COMBINER_HINDEXED_BLOCK: case MPI_COMBINER_STRUCT:
    case MPI_COMBINER_SUBARRAY: case MPI_COMBINER_DARRAY: case MPI_COMBINER_RESIZED: break;
    default: return MPI_DATATYPE_NULL;
  }
  std::vector<int> ints(static_cast<std::size_t>(integers));
  std::vector<MPI_Aint> addrs(static_cast<std::size_t>(addresses));
  std::vector<MPI_Datatype> parts(static_cast<std::size_t>(types));
  ISO_MPI_CHECK(MPI_Type_get_contents(type, integers, addresses, types, ints.data(), addrs.data(), parts.data()));
  MPI_Datatype leaf = MPI_DATATYPE_NULL;
  bool single = true;
  for (MPI_Datatype part : parts) {
    // A struct entry of zero blocks contributes nothing to the signature.
    const MPI_Datatype found = single_leaf_type(part, depth + 1);
    if (found == MPI_DATATYPE_NULL || (leaf != MPI_DATATYPE_NULL && found != leaf)) single = false;
    else leaf = found;
    int inner = 0, a = 0, t = 0, kind = 0;
    ISO_MPI_CHECK(MPI_Type_get_envelope(part, &inner, &a, &t, &kind));
    if (kind != MPI_COMBINER_NAMED) ISO_MPI_CHECK(MPI_Type_free(&part));
  }
  return single ? leaf : MPI_DATATYPE_NULL;
}

// How a block in transit is stored: compact where the signature allows.
BlockDesc staging_shape(const BlockDesc& block) {
  const MPI_Datatype leaf = single_leaf_type(block.type);
  if (leaf != MPI_DATATYPE_NULL) {
    const TypeInfo whole = type_info(block.type), element = type_info(leaf);
    const long bytes = static_cast<long>(block.count) * whole.size;
    if (element.size > 0 && element.extent == element.size && bytes % element.size == 0 &&
        bytes / element.size <= 2147483647L)
      return {0, static_cast<int>(bytes / element.size), leaf};
  }
  return {0, block.count, block.type};
}

void commit_indexed(const std::vector<int>& counts, const std::vector<MPI_Aint>& displacements,
                    const std::vector<MPI_Datatype>& types, MPI_Datatype& type) {
  const bool uniform = std::all_of(types.begin(), types.end(), [&](MPI_Datatype t) { return t == types[0]; });
  const int n = static_cast<int>(counts.size());
  const bool same_counts = std::all_of(counts.begin(), counts.end(), [&](int c) { return c == counts[0]; });
  if (uniform && same_counts)
    ISO_MPI_CHECK(MPI_Type_create_hindexed_block(n, counts[0], displacements.data(), types[0], &type));
  else if (uniform)
    ISO_MPI_CHECK(MPI_Type_create_hindexed(n, counts.data(), displacements.data(), types[0], &type));
  else
    ISO_MPI_CHECK(MPI_Type_create_struct(n, counts.data(), displacements.data(), types.data(), &type));
  ISO_MPI_CHECK(MPI_Type_commit(&type));
}

void Buffers::materialize(int neighbors) {
  auto fill = [](std::vector<BlockDesc>& side, int blocks, MPI_Aint stride) {
    if (side.empty() || static_cast<int>(side.size()) >= blocks) return;
    const BlockDesc first = side[0];
    side.reserve(static_cast<std::size_t>(blocks));
    for (int i = static_cast<int>(side.size()); i < blocks; ++i)
      side.push_back({MPI_Aint_add(first.address, static_cast<MPI_Aint>(i) * stride), first.count, first.type});
  };
  fill(send, send_blocks, send_stride);
  fill(recv, recv_blocks, recv_stride);
  temp.resize(static_cast<std::size_t>(neighbors));
  temp2.resize(static_cast<std::size_t>(neighbors));
}

long block_bytes(const BlockDesc& block) {
  int size = 0;
  ISO_MPI_CHECK(MPI_Type_size(block.type, &size));
  return static_cast<long>(block.count) * size;
}

// Bytes that lie back to back from the block's address: a predefined type, or
// a contiguous run of one (the shapes of regular blocks and staging slots).
// Returns that predefined type, MPI_DATATYPE_NULL for any other layout.
MPI_Datatype contiguous_element(const BlockDesc& block) {
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  ISO_MPI_CHECK(MPI_Type_get_envelope(block.type, &integers, &addresses, &types, &combiner));
  MPI_Datatype element = block.type;
  if (combiner == MPI_COMBINER_CONTIGUOUS || combiner == MPI_COMBINER_DUP) {
    int count[1] = {0};
    MPI_Aint none[1];
    MPI_Datatype inner[1];
    if (integers > 1 || types != 1) return MPI_DATATYPE_NULL;
    ISO_MPI_CHECK(MPI_Type_get_contents(block.type, integers, 0, 1, count, none, inner));
    int inner_integers = 0, inner_addresses = 0, inner_types = 0, inner_combiner = 0;
    ISO_MPI_CHECK(MPI_Type_get_envelope(inner[0], &inner_integers, &inner_addresses, &inner_types, &inner_combiner));
    if (inner_combiner != MPI_COMBINER_NAMED) {
      ISO_MPI_CHECK(MPI_Type_free(&inner[0]));
      return MPI_DATATYPE_NULL;
    }
    element = inner[0];
  } else if (combiner != MPI_COMBINER_NAMED) {
    return MPI_DATATYPE_NULL;
  }
  const TypeInfo whole = type_info(block.type), unit = type_info(element);
  const bool dense = unit.size > 0 && unit.extent == unit.size && unit.true_lb == 0 && whole.extent == whole.size &&
                     whole.true_lb == 0;
  return dense ? element : MPI_DATATYPE_NULL;
}


// Appends a run, merged with the previous one where they touch.
void append_run(std::vector<Run>& runs, MPI_Aint address, MPI_Aint bytes, std::uint16_t region) {
  if (bytes <= 0) return;
  if (!runs.empty() && runs.back().region == region && runs.back().address + runs.back().bytes == address)
    runs.back().bytes += bytes;
  else
    runs.push_back({address, bytes, region});
}

namespace {

// A datatype's constructor arguments; frees the derived types MPI hands out.
struct Contents {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  std::vector<MPI_Datatype> types;
  explicit Contents(MPI_Datatype type) {
    int integers = 0, addresses = 0, count = 0;
    ISO_MPI_CHECK(MPI_Type_get_envelope(type, &integers, &addresses, &count, &combiner));
    if (combiner == MPI_COMBINER_NAMED) return;
    ints.resize(static_cast<std::size_t>(integers));
    addrs.resize(static_cast<std::size_t>(addresses));
    types.resize(static_cast<std::size_t>(count));
    ISO_MPI_CHECK(MPI_Type_get_contents(type, integers, addresses, count, ints.data(), addrs.data(), types.data()));
  }
  // The counts MPI defines for the combiner (MPI 4.0, 5.1.13), so that
  // reading the arguments by their meaning stays inside the arrays. An MPI
  // whose contents do not match (seen under SimGrid SMPI 3.32: a subarray
  // reported as INDEXED with a struct's arguments) gets the datatype path.
  bool well_formed() const {
    const std::size_t ni = ints.size(), na = addrs.size(), nd = types.size();
    const std::size_t n = ints.empty() ? 0 : static_cast<std::size_t>(std::max(ints[0], 0));
    switch (combiner) {
      case MPI_COMBINER_NAMED: return true;
      case MPI_COMBINER_DUP: return nd == 1;
      case MPI_COMBINER_RESIZED: return na == 2 && nd == 1;
      case MPI_COMBINER_CONTIGUOUS: return ni == 1 && nd == 1;
      case MPI_COMBINER_VECTOR: return ni == 3 && nd == 1;
      case MPI_COMBINER_HVECTOR: return ni == 2 && na == 1 && nd == 1;
      case MPI_COMBINER_INDEXED: return ni == 2 * n + 1 && nd == 1;
      case MPI_COMBINER_HINDEXED: return ni == n + 1 && na == n && nd == 1;
      case MPI_COMBINER_INDEXED_BLOCK: return ni == n + 2 && nd == 1;
      case MPI_COMBINER_HINDEXED_BLOCK: return ni == 2 && na == n && nd == 1;
      case MPI_COMBINER_STRUCT: return ni == n + 1 && na == n && nd == n;
      case MPI_COMBINER_SUBARRAY: return ni == 3 * n + 2 && nd == 1;
      default: return false;
    }
  }
  Contents(const Contents&) = delete;
  Contents& operator=(const Contents&) = delete;
  ~Contents() {
    for (MPI_Datatype& type : types) {
      int integers = 0, addresses = 0, count = 0, kind = MPI_COMBINER_NAMED;
      MPI_Type_get_envelope(type, &integers, &addresses, &count, &kind);
      if (kind != MPI_COMBINER_NAMED) MPI_Type_free(&type);
    }
  }
};

// The byte runs one element of a datatype covers, relative to its address,
// in type-map order (the order MPI packs them), touching runs merged. Lets
// small messages and local moves be plain memcpy's of runs computed once at
// init instead of a walk of MPI's datatype engine at every start. False for
// layouts not looked into (darray, Fortran types, named types with holes) or
// more than `budget` runs: callers keep the datatype path.
class Flattener {
public:
  explicit Flattener(std::size_t budget) : budget_(budget) {}

  bool runs_of(MPI_Datatype type, std::vector<Run>& out, int depth = 0) {
    if (depth > 32) return false;
    const Contents c(type);
    if (!c.well_formed()) return false;
    // `copies` consecutive elements of `old` at each displacement.
    auto place = [&](MPI_Datatype old, const std::vector<std::pair<MPI_Aint, long>>& blocks) {
      std::vector<Run> pattern;
      if (!runs_of(old, pattern, depth + 1)) return false;
      const MPI_Aint extent = type_info(old).extent;
      const bool dense = pattern.size() == 1 && pattern[0].address == 0 && pattern[0].bytes == extent;
      for (const auto& [displacement, copies] : blocks) {
        if (dense) {
          append_run(out, displacement, extent * copies);
        } else {
          for (long k = 0; k < copies; ++k)
            for (const Run& run : pattern) append_run(out, displacement + k * extent + run.address, run.bytes);
        }
        if (out.size() > budget_) return false;
      }
      return true;
    };
    std::vector<std::pair<MPI_Aint, long>> where;
    const int n = c.ints.empty() ? 0 : c.ints[0];
    switch (c.combiner) {
      case MPI_COMBINER_NAMED: {
        const TypeInfo info = type_info(type);
        if (info.size != info.extent || info.true_lb != 0) return false;
        append_run(out, 0, info.size);
        return out.size() <= budget_;
      }
      case MPI_COMBINER_DUP: case MPI_COMBINER_RESIZED:
        return place(c.types[0], {{0, 1}});
      case MPI_COMBINER_CONTIGUOUS:
        return place(c.types[0], {{0, n}});
      case MPI_COMBINER_VECTOR: case MPI_COMBINER_HVECTOR: {
        const MPI_Aint stride = c.combiner == MPI_COMBINER_VECTOR
                                    ? static_cast<MPI_Aint>(c.ints[2]) * type_info(c.types[0]).extent
                                    : c.addrs[0];
        for (int i = 0; i < n; ++i) where.emplace_back(i * stride, c.ints[1]);
        return place(c.types[0], where);
      }
      case MPI_COMBINER_INDEXED: case MPI_COMBINER_HINDEXED: {
        const MPI_Aint extent = type_info(c.types[0]).extent;
        for (int i = 0; i < n; ++i)
          where.emplace_back(c.combiner == MPI_COMBINER_INDEXED ? c.ints[1 + n + i] * extent : c.addrs[i],
                             c.ints[1 + i]);
        return place(c.types[0], where);
      }
      case MPI_COMBINER_INDEXED_BLOCK: case MPI_COMBINER_HINDEXED_BLOCK: {
        const MPI_Aint extent = type_info(c.types[0]).extent;
        for (int i = 0; i < n; ++i)
          where.emplace_back(c.combiner == MPI_COMBINER_INDEXED_BLOCK ? c.ints[2 + i] * extent : c.addrs[i],
                             c.ints[1]);
        return place(c.types[0], where);
      }
      case MPI_COMBINER_STRUCT:
        for (int i = 0; i < n; ++i)
          if (!place(c.types[i], {{c.addrs[i], c.ints[1 + i]}})) return false;
        return true;
      case MPI_COMBINER_SUBARRAY: {
        const int* sizes = &c.ints[1];
        const int* subsizes = &c.ints[1 + n];
        const int* starts = &c.ints[1 + 2 * n];
        const bool c_order = c.ints[1 + 3 * n] == MPI_ORDER_C;
        if (n == 0) return true;
        // Dimensions from slowest to fastest varying; rows along the fastest.
        std::vector<int> dim(static_cast<std::size_t>(n));
        for (int k = 0; k < n; ++k) dim[static_cast<std::size_t>(k)] = c_order ? k : n - 1 - k;
        std::vector<MPI_Aint> stride(static_cast<std::size_t>(n));
        MPI_Aint step = type_info(c.types[0]).extent;
        for (int k = n - 1; k >= 0; --k) {
          stride[static_cast<std::size_t>(k)] = step;
          step *= sizes[dim[static_cast<std::size_t>(k)]];
        }
        for (int k = 0; k < n; ++k)
          if (subsizes[k] == 0) return true;
        std::vector<int> index(static_cast<std::size_t>(n), 0);
        const int fast = dim[static_cast<std::size_t>(n - 1)];
        while (true) {
          MPI_Aint at = 0;
          for (int k = 0; k < n; ++k)
            at += static_cast<MPI_Aint>(starts[dim[static_cast<std::size_t>(k)]] + index[static_cast<std::size_t>(k)]) *
                  stride[static_cast<std::size_t>(k)];
          where.emplace_back(at, subsizes[fast]);
          if (where.size() > budget_) return false;
          int k = n - 2;
          while (k >= 0 && ++index[static_cast<std::size_t>(k)] == subsizes[dim[static_cast<std::size_t>(k)]])
            index[static_cast<std::size_t>(k--)] = 0;
          if (k < 0) break;
        }
        return place(c.types[0], where);
      }
      default:
        return false;
    }
  }

private:
  std::size_t budget_;
};

}  // namespace

MPI_Datatype TypeFacts::leaf(const BlockDesc& block) {
  Facts& facts = of(block);
  if (!facts.leaf_known) facts.leaf = single_leaf_type(block.type), facts.leaf_known = true;
  return facts.leaf;
}

bool TypeFacts::describe(const BlockDesc& block, std::vector<std::int64_t>& out) {
  Facts& facts = of(block);
  if (facts.named) {
    out.insert(out.end(), {0, handle_word(block.type)});
    return true;
  }
  const TypeInfo info = type_info(block.type);
  if (describe_subarray(facts, info, out)) return true;
  if (!flatten(facts)) return false;
  out.insert(out.end(), {1, facts.size, info.extent, info.true_lb, info.true_extent, handle_word(facts.element),
                         handle_word(leaf(block)), static_cast<std::int64_t>(facts.runs.size())});
  for (const Run& run : facts.runs) out.insert(out.end(), {run.address, run.bytes});
  return true;
}

// A subarray of a dense predefined type is determined by its constructor's
// arguments, so those describe it: no flattening, and no duplicated inner
// types from MPI_Type_get_contents, for the dozens of subarrays a grid's
// exchange hands over (docs/results/petsc-small). Its row count must stay
// within the run budget, so that such a key still means a flattenable type.
bool TypeFacts::describe_subarray(Facts& facts, const TypeInfo& info, std::vector<std::int64_t>& out) {
  const Contents c(facts.type);
  if (c.combiner != MPI_COMBINER_SUBARRAY || !c.well_formed() || c.ints.empty()) return false;
  const MPI_Datatype old = c.types[0];
  int integers = 0, addresses = 0, count = 0, combiner = 0;
  ISO_MPI_CHECK(MPI_Type_get_envelope(old, &integers, &addresses, &count, &combiner));
  if (combiner != MPI_COMBINER_NAMED) return false;
  const TypeInfo element = type_info(old);
  if (element.size != element.extent || element.true_lb != 0) return false;
  const int n = c.ints[0];
  const bool c_order = c.ints[static_cast<std::size_t>(1 + 3 * n)] == MPI_ORDER_C;
  std::size_t rows = 1;
  for (int k = 0; k < n; ++k)
    if (k != (c_order ? n - 1 : 0)) rows *= static_cast<std::size_t>(c.ints[static_cast<std::size_t>(1 + n + k)]);
  if (rows > run_budget) return false;
  if (!facts.leaf_known) facts.leaf = old, facts.leaf_known = true;
  out.insert(out.end(), {2, facts.size, info.extent, info.true_lb, info.true_extent, handle_word(facts.element),
                         handle_word(old), static_cast<std::int64_t>(c.ints.size())});
  out.insert(out.end(), c.ints.begin(), c.ints.end());
  return true;
}

bool TypeFacts::append_runs(const BlockDesc& block, std::vector<Run>& out, std::uint16_t region) {
  Facts& facts = of(block);
  if (!flatten(facts)) return false;
  for (long k = 0; k < block.count; ++k) {
    for (const Run& run : facts.runs)
      append_run(out, block.address + k * facts.extent + run.address, run.bytes, region);
    if (out.size() > run_budget) return false;
  }
  return true;
}

bool TypeFacts::flatten(Facts& facts) {
  if (!facts.runs_known) {
    Flattener flattener(run_budget);
    facts.runs_ok = flattener.runs_of(facts.type, facts.runs);
    facts.extent = type_info(facts.type).extent;
    facts.runs_known = true;
  }
  return facts.runs_ok;
}

TypeFacts::Facts& TypeFacts::of(const BlockDesc& block) {
  if (last_ && last_->type == block.type) return *last_;
  for (Facts& known : known_)
    if (known.type == block.type) return *(last_ = &known);
  int size = 0;
  ISO_MPI_CHECK(MPI_Type_size(block.type, &size));
  int integers = 0, addresses = 0, types = 0, combiner = MPI_COMBINER_NAMED;
  ISO_MPI_CHECK(MPI_Type_get_envelope(block.type, &integers, &addresses, &types, &combiner));
  Facts facts;
  facts.type = block.type, facts.element = contiguous_element(block), facts.size = size;
  facts.named = combiner == MPI_COMBINER_NAMED;
  known_.push_back(std::move(facts));
  return *(last_ = &known_.back());
}

}  // namespace iso::detail
