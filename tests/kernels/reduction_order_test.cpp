// Reductions are bit-identical whatever the backend and thread count:
// reduce_cells on every enabled host execution space (Serial, OpenMP at the
// thread count ctest gives, and where Kokkos allows a 1-thread OpenMP
// partition of the same process) equals a sum computed here on the host in
// the order update.hpp documents, bit for bit, over boxes of many shapes;
// reduce_cells_mdrange equals the documented device order, as reduce_cells
// does on a device space (CUDA: the default space; the host spaces there read
// a host copy of the values). The values span many orders of magnitude with
// both signs, so summing in any other grouping rounds differently: the test
// checks that too (a plain row-major sum and a two-way split differ from the
// reference on most boxes), so it would catch an order that follows the
// threads (ISOSTENCIL_UNORDERED_REDUCTIONS).
#include "isostencil/kernels/jacobi_residual.hpp"
#include "isostencil/kernels/update.hpp"
#include "isostencil_test.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace isostencil;
using kernels::Box;
using kernels::Index;

/// The field's value at row-major index i: +-1e15, +-1, 1e-9, scaled by a
/// factor with many significant bits, so that partial sums keep changing
/// in their last bits as cells are added.
double irregular(std::int64_t i) {
  const double scale = 1.0 + 1e-13 * static_cast<double>((i * 7919) % 1009);
  switch (i % 5) {
    case 0: return 1e15 * scale;
    case 1: return -1e15 * scale * 0.999;
    case 2: return 1.0 * scale;
    case 3: return -0.3 * scale;
    default: return 1e-9 * scale;
  }
}

template <int D>
struct Field {
  Index<D> extent{};
  Kokkos::Array<std::int64_t, D> stride{};
  Kokkos::View<double*> values;  // default memory space
  // The same values in host memory, read by the host spaces of a device
  // build (Serial cannot read CUDA memory), and for the references.
  Kokkos::View<const double*, Kokkos::HostSpace> host_values;
  std::vector<double> host;

  explicit Field(const Index<D>& e) : extent(e) {
    std::int64_t n = 1;
    for (int j = D - 1; j >= 0; --j) {
      stride[j] = n;
      n *= extent[j];
    }
    values = Kokkos::View<double*>("values", static_cast<std::size_t>(n));
    auto mirror = Kokkos::create_mirror_view(values);
    host.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
      host[static_cast<std::size_t>(i)] = mirror(static_cast<std::size_t>(i)) = irregular(i);
    Kokkos::deep_copy(values, mirror);
    host_values = mirror;
  }
  double at(const Index<D>& x) const {
    std::int64_t i = 0;
    for (int j = 0; j < D; ++j)
      i += x[j] * stride[j];
    return host[static_cast<std::size_t>(i)];
  }
};

/// The values as `Space` reads them: those in the default memory space where
/// it can, else the host copy.
template <class Space, int D>
auto values_for(const Field<D>& field) {
  using Memory = Kokkos::DefaultExecutionSpace::memory_space;
  if constexpr (Kokkos::SpaceAccessibility<Space, Memory>::accessible)
    return Kokkos::View<const double*>(field.values);
  else
    return field.host_values;
}

/// The reduced functor: a sum of the cells (the common case) ...
template <int D, class Values>
struct SumCells {
  Values values;
  Kokkos::Array<std::int64_t, D> stride;
  KOKKOS_INLINE_FUNCTION void operator()(const Index<D>& x, double& sum) const {
    std::int64_t i = 0;
    for (int j = 0; j < D; ++j)
      i += x[j] * stride[j];
    sum += values(static_cast<std::size_t>(i));
  }
};

/// ... and a struct Value (sum of squares and maximum, as Jacobi's residual).
template <int D, class Values>
struct ResidualOfCells {
  Values values;
  Kokkos::Array<std::int64_t, D> stride;
  KOKKOS_INLINE_FUNCTION void operator()(const Index<D>& x, kernels::ResidualSums& sums) const {
    std::int64_t i = 0;
    for (int j = 0; j < D; ++j)
      i += x[j] * stride[j];
    sums.add(values(static_cast<std::size_t>(i)) * 1e-7);
  }
};

// ---------------------------------------------------------------------------
// References, written from update.hpp's header comment.

/// The combine rule: runs of reduce_fan_in consecutive partials replaced by
/// their sums while more are left, then the rest added in order.
template <class Value>
Value combine(std::vector<Value> partials) {
  const std::size_t fan = static_cast<std::size_t>(kernels::detail::reduce_fan_in);
  while (partials.size() > fan) {
    std::vector<Value> sums;
    for (std::size_t first = 0; first < partials.size(); first += fan) {
      Value sum{};
      for (std::size_t i = first; i < first + fan && i < partials.size(); ++i)
        sum += partials[i];
      sums.push_back(sum);
    }
    partials = sums;
  }
  Value total{};
  for (const Value& p : partials)
    total += p;
  return total;
}

/// Calls f(x) for x over [begin, end) of dimensions `dims` (row-major), the
/// other components of x as given.
template <int D>
void row_major(const Box<D>& box, const std::vector<int>& dims, Index<D> x,
               const std::function<void(const Index<D>&)>& f, std::size_t k = 0) {
  if (k == dims.size()) {
    f(x);
    return;
  }
  const int j = dims[k];
  for (x[j] = box.begin[j]; x[j] < box.end[j]; ++x[j])
    row_major<D>(box, dims, x, f, k + 1);
}

/// Host order: items are groups of rows_per_item rows along dimension D-2
/// (lines along D-2 for boxes thinner than 8 in D-1 and thicker in D-2),
/// numbered row-major over the other dimensions, then the group.
template <int D, class Value, class Add>
Value host_order(const Field<D>& field, const Box<D>& box, const Add& add) {
  std::vector<Value> partials;
  if constexpr (D == 1) {
    Value v{};
    for (int i = box.begin[0]; i < box.end[0]; ++i)
      add(v, field.at(Index<1>{{i}}));
    partials.push_back(v);
  } else {
    const int last = box.end[D - 1] - box.begin[D - 1];
    const int second = box.end[D - 2] - box.begin[D - 2];
    std::vector<int> outer;
    for (int j = 0; j + 2 < D; ++j)
      outer.push_back(j);
    if (last < 8 && second > last) {
      outer.push_back(D - 1);
      row_major<D>(box, outer, box.begin, [&](const Index<D>& x0) {
        Value v{};
        Index<D> x = x0;
        for (x[D - 2] = box.begin[D - 2]; x[D - 2] < box.end[D - 2]; ++x[D - 2])
          add(v, field.at(x));
        partials.push_back(v);
      });
    } else {
      row_major<D>(box, outer, box.begin, [&](const Index<D>& x0) {
        for (int g = box.begin[D - 2]; g < box.end[D - 2]; g += kernels::detail::rows_per_item) {
          Value v{};
          Index<D> x = x0;
          for (x[D - 2] = g; x[D - 2] < g + kernels::detail::rows_per_item &&
                             x[D - 2] < box.end[D - 2];
               ++x[D - 2])
            for (x[D - 1] = box.begin[D - 1]; x[D - 1] < box.end[D - 1]; ++x[D - 1])
              add(v, field.at(x));
          partials.push_back(v);
        }
      });
    }
  }
  return combine(partials);
}

/// Device order: cells numbered row-major over the box, part c of C holds
/// c, c + C, ...
template <int D, class Value, class Add>
Value device_order(const Field<D>& field, const Box<D>& box, const Add& add) {
  std::vector<int> all;
  for (int j = 0; j < D; ++j)
    all.push_back(j);
  std::vector<Index<D>> cells;
  row_major<D>(box, all, box.begin, [&](const Index<D>& x) { cells.push_back(x); });
  const std::size_t parts =
      std::min<std::size_t>(cells.size(), kernels::detail::device_reduce_chunks);
  std::vector<Value> partials(parts);
  for (std::size_t c = 0; c < parts; ++c)
    for (std::size_t i = c; i < cells.size(); i += parts)
      add(partials[c], field.at(cells[i]));
  return combine(partials);
}

void add_double(double& v, double x) { v += x; }
void add_residual(kernels::ResidualSums& v, double x) { v.add(x * 1e-7); }

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same_bits(const kernels::ResidualSums& a, const kernels::ResidualSums& b) {
  return same_bits(a.sum_of_squares, b.sum_of_squares) && same_bits(a.max_abs, b.max_abs);
}

/// Boxes of many shapes inside a field of extent `e`: whole, thin in the last
/// dimension (the lines path), one row, one cell, off-centre, many row groups.
template <int D>
std::vector<Box<D>> boxes(const Index<D>& e) {
  std::vector<Box<D>> list;
  Box<D> whole;
  for (int j = 0; j < D; ++j) {
    whole.begin[j] = 0;
    whole.end[j] = e[j];
  }
  list.push_back(whole);
  Box<D> inner = whole;
  for (int j = 0; j < D; ++j) {
    inner.begin[j] = 1 + j % 2;
    inner.end[j] = e[j] - 2;
  }
  list.push_back(inner);
  for (int width : {1, 2, 5, 7}) {  // thin in the last dimension
    Box<D> thin = inner;
    thin.end[D - 1] = thin.begin[D - 1] + width;
    list.push_back(thin);
  }
  Box<D> row = inner;  // one row
  for (int j = 0; j + 1 < D; ++j)
    row.end[j] = row.begin[j] + 1;
  list.push_back(row);
  Box<D> cell = row;  // one cell
  cell.end[D - 1] = cell.begin[D - 1] + 1;
  list.push_back(cell);
  if constexpr (D >= 2) {
    Box<D> slab = inner;  // a slab of planes, as the overlap cuts them
    slab.begin[0] = 3;
    slab.end[0] = 5;
    list.push_back(slab);
    Box<D> lines = inner;  // 17 rows: two row groups, the second of one row
    lines.end[D - 2] = lines.begin[D - 2] + 17;
    list.push_back(lines);
  }
  return list;
}

/// What one execution space computes for every box: sums (in the space's
/// order, and in the device order) and residual sums (the space's order).
struct Results {
  bool on_host = true;  ///< the space reduces in the host order, else the device order
  std::vector<double> sums, mdrange_sums;
  std::vector<kernels::ResidualSums> residuals;
};

template <int D, class Space>
Results reduce_all(const Space& space, const Field<D>& field, const std::vector<Box<D>>& list) {
  const auto values = values_for<Space>(field);
  const SumCells<D, decltype(values)> sum{values, field.stride};
  const ResidualOfCells<D, decltype(values)> residual{values, field.stride};
  Results r;
  r.on_host = kernels::detail::runs_on_host<Space>;
  for (const Box<D>& box : list) {
    double s = 0, m = 0;
    kernels::ResidualSums q;
    kernels::reduce_cells<D>(space, "reduction order", box, sum, s);
    kernels::reduce_cells_mdrange<D>(space, "reduction order", box, sum, m);
    kernels::reduce_cells<D>(space, "reduction order", box, residual, q);
    r.sums.push_back(s);
    r.mdrange_sums.push_back(m);
    r.residuals.push_back(q);
  }
  return r;
}

/// Results of every space this build has: the default space, the default
/// host space and Serial (when enabled), and a 1-thread OpenMP partition
/// where Kokkos 3 can make one. Names say which is which.
template <int D>
std::vector<std::pair<std::string, Results>> every_space(const Field<D>& field,
                                                         const std::vector<Box<D>>& list) {
  std::vector<std::pair<std::string, Results>> all;
  const Kokkos::DefaultExecutionSpace space;
  all.emplace_back(std::string(space.name()) + " (" + std::to_string(space.concurrency()) +
                       " threads)",
                   reduce_all<D>(space, field, list));
  const Kokkos::DefaultHostExecutionSpace host;
  all.emplace_back(std::string(host.name()) + " (host, " + std::to_string(host.concurrency()) +
                       " threads)",
                   reduce_all<D>(host, field, list));
#if defined(KOKKOS_ENABLE_SERIAL)
  all.emplace_back("Serial", reduce_all<D>(Kokkos::Serial(), field, list));
#endif
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
  // partition_master needs nested parallelism; one partition of one thread.
  if (Kokkos::OpenMP::concurrency() > 1) {
    const int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(2);
    Results one;
    int threads = 0;
    Kokkos::OpenMP::partition_master(
        [&](int, int) {
          threads = Kokkos::OpenMP::impl_thread_pool_size();  // the partition's threads
          one = reduce_all<D>(Kokkos::OpenMP(), field, list);
        },
        1, 1);
    omp_set_max_active_levels(levels);
    all.emplace_back("OpenMP partition (" + std::to_string(threads) + " thread)", one);
  }
#endif
  return all;
}

template <int D>
void check_field(const Index<D>& extent) {
  const Field<D> field(extent);
  const std::vector<Box<D>> list = boxes<D>(extent);
  std::vector<double> want, want_device;
  std::vector<kernels::ResidualSums> want_residual, want_residual_device;
  int sensitive = 0, big = 0;
  for (const Box<D>& box : list) {
    want.push_back(host_order<D, double>(field, box, add_double));
    want_device.push_back(device_order<D, double>(field, box, add_double));
    want_residual.push_back(host_order<D, kernels::ResidualSums>(field, box, add_residual));
    want_residual_device.push_back(
        device_order<D, kernels::ResidualSums>(field, box, add_residual));
    // Another grouping gives other bits: the cells split in two halves,
    // each summed row-major, as two threads of a parallel_reduce would.
    std::vector<int> all;
    for (int j = 0; j < D; ++j)
      all.push_back(j);
    std::vector<double> cells;
    row_major<D>(box, all, box.begin, [&](const Index<D>& x) { cells.push_back(field.at(x)); });
    if (cells.size() < 200) continue;
    ++big;
    double lo = 0, hi = 0;
    for (std::size_t i = 0; i < cells.size(); ++i)
      (i < cells.size() / 2 ? lo : hi) += cells[i];
    sensitive += !same_bits(lo + hi, want.back());
  }
  EXPECT_GE(sensitive, big - 1) << "the values do not tell summation orders apart (" << sensitive
                                << " of " << big << " boxes)";
  EXPECT_GT(big, 0);

  const auto spaces = every_space<D>(field, list);
  std::string names;
  for (const auto& space : spaces)
    names += (names.empty() ? "" : "; ") + space.first;
  std::printf("%d-D, %zu boxes, compared: %s\n", D, list.size(), names.c_str());
  for (const auto& [name, got] : spaces) {
    for (std::size_t b = 0; b < list.size(); ++b) {
      const double want_sum = got.on_host ? want[b] : want_device[b];
      EXPECT_TRUE(same_bits(got.sums[b], want_sum))
          << name << ", " << D << "-D box " << b << " of " << list[b].cells() << " cells: sum "
          << std::hexfloat << got.sums[b] << ", the documented order gives " << want_sum;
      EXPECT_TRUE(same_bits(got.mdrange_sums[b], want_device[b]))
          << name << ", " << D << "-D box " << b << ": device-order sum " << std::hexfloat
          << got.mdrange_sums[b] << ", the documented order gives " << want_device[b];
      if (got.on_host) {
        EXPECT_TRUE(same_bits(got.residuals[b], want_residual[b]))
            << name << ", " << D << "-D box " << b << ": sum of squares " << std::hexfloat
            << got.residuals[b].sum_of_squares << ", the documented order gives "
            << want_residual[b].sum_of_squares;
      } else {
        // A device compiler may fuse r * r + sum into one multiply-add,
        // which rounds once: the sum of squares is then only close.
        const kernels::ResidualSums& w = want_residual_device[b];
        EXPECT_TRUE(same_bits(got.residuals[b].max_abs, w.max_abs)) << name << ", box " << b;
        EXPECT_NEAR(got.residuals[b].sum_of_squares, w.sum_of_squares, 1e-12 * w.sum_of_squares)
            << name << ", " << D << "-D box " << b;
      }
    }
  }
}

TEST(ReductionOrder, OneDimension) { check_field<1>(Index<1>{{70001}}); }
TEST(ReductionOrder, TwoDimensions) { check_field<2>(Index<2>{{301, 257}}); }
TEST(ReductionOrder, ThreeDimensions) { check_field<3>(Index<3>{{37, 41, 29}}); }
TEST(ReductionOrder, FourDimensions) { check_field<4>(Index<4>{{9, 13, 35, 11}}); }

// Integer reductions are exact in any order; they take the same path.
struct CountOdd {
  KOKKOS_INLINE_FUNCTION void operator()(const Index<3>& x, long& n) const {
    n += (x[0] + x[1] + x[2]) % 2;
  }
};
TEST(ReductionOrder, IntegerCount) {
  const Box<3> box{{{1, 2, 3}}, {{20, 33, 47}}};
  long n = 0, m = 0;
  kernels::reduce_cells<3>("count", box, CountOdd{}, n);
  kernels::reduce_cells_mdrange<3>("count", box, CountOdd{}, m);
  long want = 0;
  for (int i = 1; i < 20; ++i)
    for (int j = 2; j < 33; ++j)
      for (int k = 3; k < 47; ++k)
        want += (i + j + k) % 2;
  EXPECT_EQ(n, want);
  EXPECT_EQ(m, want);
}

}  // namespace
