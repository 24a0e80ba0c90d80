// Serial reference for Life-like automata, independent of the kernel code:
// plain loops over a global row-major std::vector, every cell counting its
// 3^d - 1 Moore neighbors one by one, with periodic wrap or dead cells
// outside non-periodic dimensions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

namespace life_reference {

/// birth[c] / survival[c]: the next state of a dead / live cell with c live neighbors.
struct Rule {
  std::vector<bool> birth, survival;
};

inline long pow3(int d) {
  return d == 0 ? 1 : 3 * pow3(d - 1);
}

/// Counts listed one by one, plus inclusive ranges {first, last}.
inline Rule make_rule(int dims, std::initializer_list<int> birth,
                      std::initializer_list<int> survival) {
  Rule rule;
  rule.birth.assign(static_cast<std::size_t>(pow3(dims)), false);
  rule.survival.assign(static_cast<std::size_t>(pow3(dims)), false);
  for (int c : birth)
    rule.birth.at(static_cast<std::size_t>(c)) = true;
  for (int c : survival)
    rule.survival.at(static_cast<std::size_t>(c)) = true;
  return rule;
}
inline Rule make_range_rule(int dims, int birth_first, int birth_last, int survival_first,
                            int survival_last) {
  Rule rule = make_rule(dims, {}, {});
  for (int c = birth_first; c <= birth_last; ++c)
    rule.birth.at(static_cast<std::size_t>(c)) = true;
  for (int c = survival_first; c <= survival_last; ++c)
    rule.survival.at(static_cast<std::size_t>(c)) = true;
  return rule;
}

struct World {
  std::vector<long> extent;
  std::vector<bool> periodic;
  std::vector<std::uint8_t> cells;

  long size() const {
    long n = 1;
    for (long e : extent)
      n *= e;
    return n;
  }
  int dims() const { return static_cast<int>(extent.size()); }
  /// Row-major index of `coords`, or -1 outside a non-periodic dimension.
  long index(std::vector<long> coords) const {
    long linear = 0;
    for (int j = 0; j < dims(); ++j) {
      long c = coords[static_cast<std::size_t>(j)];
      const long n = extent[static_cast<std::size_t>(j)];
      if (c < 0 || c >= n) {
        if (!periodic[static_cast<std::size_t>(j)]) return -1;
        c = ((c % n) + n) % n;
      }
      linear = linear * n + c;
    }
    return linear;
  }
  std::vector<long> coords(long linear) const {
    std::vector<long> c(extent.size());
    for (int j = dims() - 1; j >= 0; --j) {
      c[static_cast<std::size_t>(j)] = linear % extent[static_cast<std::size_t>(j)];
      linear /= extent[static_cast<std::size_t>(j)];
    }
    return c;
  }
};

inline World make_world(std::vector<long> extent, std::vector<bool> periodic) {
  World world{std::move(extent), std::move(periodic), {}};
  world.cells.assign(static_cast<std::size_t>(world.size()), 0);
  return world;
}

inline void step(World& world, const Rule& rule) {
  const int d = world.dims();
  const long box = pow3(d);
  std::vector<std::uint8_t> next(world.cells.size());
  for (long cell = 0; cell < world.size(); ++cell) {
    const std::vector<long> at = world.coords(cell);
    int count = 0;
    for (long k = 0; k < box; ++k) {
      std::vector<long> neighbor = at;
      long rest = k;
      bool centre = true;
      for (int j = 0; j < d; ++j) {
        const long offset = rest % 3 - 1;
        rest /= 3;
        neighbor[static_cast<std::size_t>(j)] += offset;
        centre = centre && offset == 0;
      }
      if (centre) continue;
      const long linear = world.index(neighbor);
      if (linear >= 0) count += world.cells[static_cast<std::size_t>(linear)] != 0 ? 1 : 0;
    }
    const bool alive = world.cells[static_cast<std::size_t>(cell)] != 0;
    next[static_cast<std::size_t>(cell)] =
        (alive ? rule.survival : rule.birth)[static_cast<std::size_t>(count)] ? 1 : 0;
  }
  world.cells.swap(next);
}

inline void run(World& world, const Rule& rule, int generations) {
  for (int g = 0; g < generations; ++g)
    step(world, rule);
}

/// A random field from std::mt19937_64 (independent of the kernels' fill).
inline std::vector<std::uint8_t> random_cells(long size, std::uint64_t seed, double density) {
  std::mt19937_64 engine(seed);
  std::bernoulli_distribution alive(density);
  std::vector<std::uint8_t> cells(static_cast<std::size_t>(size));
  for (auto& cell : cells)
    cell = alive(engine) ? 1 : 0;
  return cells;
}

inline long population(const std::vector<std::uint8_t>& cells) {
  long n = 0;
  for (std::uint8_t c : cells)
    n += c != 0 ? 1 : 0;
  return n;
}

/// "" when equal, else the first differing cell and both values.
inline std::string first_difference(const World& world, const std::vector<std::uint8_t>& got) {
  if (got.size() != world.cells.size())
    return "size " + std::to_string(got.size()) + " vs " + std::to_string(world.cells.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] == world.cells[i]) continue;
    std::string where = "(";
    const std::vector<long> c = world.coords(static_cast<long>(i));
    for (std::size_t j = 0; j < c.size(); ++j)
      where += (j > 0 ? "," : "") + std::to_string(c[j]);
    return "cell " + where + "): kernel " + std::to_string(got[i]) + ", reference " +
           std::to_string(world.cells[i]);
  }
  return {};
}

}  // namespace life_reference
