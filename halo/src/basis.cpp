// The additive basis of the basis algorithm (docs/design/schedules.md#basis):
// a short list of vectors such that every offset is a sum of distinct ones.
// Pure computation, deterministic: every process computes the same basis.
#include "iso/schedule.hpp"

#include "iso/error.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace iso {

namespace {

using Vec = std::vector<int>;

// The distinct nonzero offsets to represent, their weights (how many
// offsets of the neighborhood use a 1-D value; 1 in d dimensions) and the
// dimensions where every path must stay inside the box between origin and
// target (the non-periodic ones).
struct Problem {
  int d = 0;
  std::vector<Vec> targets;
  std::vector<long> weight;
  std::vector<char> conformal;
};

// May b be one of t's terms? In every dimension where t_j is 0 the term is 0
// too: a block then moves only along the dimensions where its offset is
// nonzero, which is what the signature rule of alltoallv/w relies on (every
// process on the path shares the block's size; docs/design/irregular.md).
// In a non-periodic dimension every term also has the sign of t_j and no
// more than its size, so that every partial sum lies between 0 and t_j.
bool allowed(const Problem& p, const int* b, const Vec& t) {
  for (int j = 0; j < p.d; ++j) {
    const int c = t[j];
    if (c == 0) {
      if (b[j] != 0) return false;
      continue;
    }
    if (!p.conformal[j]) continue;
    if (c > 0 ? (b[j] < 0 || b[j] > c) : (b[j] > 0 || b[j] < c)) return false;
  }
  return true;
}

// A basis with one representation per target (indices into vectors).
struct Candidate {
  std::vector<Vec> vectors;
  std::vector<std::vector<int>> terms;
  long volume = 0;  // sum over targets of weight x number of terms
  int size() const { return static_cast<int>(vectors.size()); }
};

bool better(const Candidate& a, const Candidate& b) {
  return a.size() < b.size() || (a.size() == b.size() && a.volume < b.volume);
}

int ceil_log2(long n) {
  int k = 0;
  while ((1L << k) < n) ++k;
  return k;
}

// ---------------------------------------------------------------------------
// Exact search: every basis of k vectors from a bounded box, for the
// smallest k (and, among those, the least volume). The first k-1 vectors are
// chosen in candidate order; the last is then forced: it is t0 - s for the
// first target t0 the others leave uncovered and some subset sum s.

struct Encoder {
  long base = 0;
  long bias = 0;
  int d = 0;
  bool ok = false;
  std::int64_t key(const int* v) const {
    std::int64_t k = 0;
    for (int j = d - 1; j >= 0; --j) k = k * base + (v[j] + bias);
    return k;
  }
};

class ExactSearch {
public:
  ExactSearch(const Problem& p, long budget) : p_(p), budget_(budget) {}

  // Searches sizes [low, high]; improves `best` (which must be valid).
  // Returns true when the search ran to the end (no budget left out).
  bool run(Candidate& best, int low, int high) {
    const int s = static_cast<int>(p_.targets.size());
    if (s == 0 || s > 63 || high < low || low < 1) return false;
    // The box: [-M_j, M_j] in a periodic dimension, between 0 and the
    // extreme values in a non-periodic one.
    std::vector<int> lo(p_.d, 0), hi(p_.d, 0);
    long reach = 0;
    for (int j = 0; j < p_.d; ++j) {
      int m = 0, mn = 0, mx = 0;
      for (const Vec& t : p_.targets) {
        m = std::max(m, std::abs(t[j]));
        mn = std::min(mn, t[j]);
        mx = std::max(mx, t[j]);
      }
      lo[j] = p_.conformal[j] ? mn : -m;
      hi[j] = p_.conformal[j] ? mx : m;
      reach = std::max(reach, static_cast<long>(m));
    }
    // Enumerate the box (bounded: the estimate below is checked first).
    long box = 1;
    for (int j = 0; j < p_.d; ++j) {
      box *= hi[j] - lo[j] + 1;
      if (box > 4096) return false;
    }
    Vec x(lo);
    for (long n = 0; n < box; ++n) {
      if (std::any_of(x.begin(), x.end(), [](int c) { return c != 0; })) {
        std::uint64_t mask = 0;
        for (int t = 0; t < s; ++t)
          if (allowed(p_, x.data(), p_.targets[t])) mask |= std::uint64_t{1} << t;
        if (mask) candidates_.push_back(x), allowed_.push_back(mask);
      }
      for (int j = 0; j < p_.d && ++x[j] > hi[j]; ++j) x[j] = lo[j];
    }
    {
      std::vector<std::size_t> order(candidates_.size());
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return candidates_[a] < candidates_[b]; });
      std::vector<Vec> vectors;
      std::vector<std::uint64_t> masks;
      for (std::size_t k : order) vectors.push_back(candidates_[k]), masks.push_back(allowed_[k]);
      candidates_ = std::move(vectors);
      allowed_ = std::move(masks);
    }
    // Cost estimate, in the budget's steps: per leaf (k-1 vectors chosen),
    // its 2^(k-1) sums, each tried as the last vector against a share of
    // the targets. A search beyond the budget is not started.
    double estimate = 0;
    const double n = static_cast<double>(candidates_.size());
    for (int k = low; k <= high; ++k) {
      double choose = 1;
      for (int i = 0; i < k - 1; ++i) choose = choose * (n - i) / (i + 1);
      estimate += choose * static_cast<double>(1L << (k - 1)) * (2.0 + s / 4.0);
    }
    if (estimate > static_cast<double>(budget_)) return false;
    // Keys of sums of up to `high` vectors of the box (and of t - w).
    encoder_.d = p_.d;
    encoder_.bias = 2 * (high + 1) * reach + 1;
    encoder_.base = 2 * encoder_.bias + 1;
    double range = 1;
    for (int j = 0; j < p_.d; ++j) range *= static_cast<double>(encoder_.base);
    if (range > 4e18) return false;
    target_keys_.clear();
    for (const Vec& t : p_.targets) target_keys_.push_back(encoder_.key(t.data()));
    for (int k = low; k <= high; ++k) {
      found_ = false;
      k_ = k;
      sums_.assign(static_cast<std::size_t>(p_.d), 0);
      sum_allowed_.assign(1, ~std::uint64_t{0});
      chosen_.clear();
      dfs(0);
      if (exhausted_) return false;
      if (found_ && better(found_best_, best)) best = found_best_;
      if (found_) return true;  // the smallest size: larger ones cannot improve
    }
    return true;
  }

private:
  bool in_box(const Vec& w) const {
    return std::binary_search(candidates_.begin(), candidates_.end(), w);
  }

  void dfs(std::size_t start) {
    if (exhausted_) return;
    if (static_cast<int>(chosen_.size()) == k_ - 1) {
      leaf();
      return;
    }
    const std::size_t count = sum_allowed_.size();
    for (std::size_t c = start; c < candidates_.size(); ++c) {
      if ((budget_ -= static_cast<long>(count)) < 0) {
        exhausted_ = true;
        return;
      }
      const Vec& b = candidates_[c];
      for (std::size_t q = 0; q < count; ++q) {
        for (int j = 0; j < p_.d; ++j) sums_.push_back(sums_[q * p_.d + j] + b[j]);
        sum_allowed_.push_back(sum_allowed_[q] & allowed_[c]);
      }
      chosen_.push_back(c);
      dfs(c + 1);
      chosen_.pop_back();
      sums_.resize(count * p_.d);
      sum_allowed_.resize(count);
      if (exhausted_) return;
    }
  }

  void leaf() {
    const int s = static_cast<int>(p_.targets.size());
    const std::size_t count = sum_allowed_.size();
    if ((budget_ -= static_cast<long>(count) * 2) < 0) {
      exhausted_ = true;
      return;
    }
    index_.clear();
    for (std::size_t q = 0; q < count; ++q) index_.emplace_back(encoder_.key(&sums_[q * p_.d]), q);
    std::sort(index_.begin(), index_.end());
    auto covered_by = [&](std::int64_t key, int t, std::uint64_t extra) {
      auto it = std::lower_bound(index_.begin(), index_.end(), std::make_pair(key, std::size_t{0}));
      for (; it != index_.end() && it->first == key; ++it)
        if ((sum_allowed_[it->second] & extra) >> t & 1) return true;
      return false;
    };
    std::vector<int> open;
    for (int t = 0; t < s; ++t)
      if (!covered_by(target_keys_[t], t, ~std::uint64_t{0})) open.push_back(t);
    if (open.empty()) return;  // a smaller basis: found at a smaller k already
    const Vec& t0 = p_.targets[open[0]];
    Vec w(p_.d), rest(p_.d);
    for (std::size_t q = 0; q < count; ++q) {
      if (!(sum_allowed_[q] >> open[0] & 1)) continue;
      bool zero = true;
      for (int j = 0; j < p_.d; ++j) zero &= (w[j] = t0[j] - sums_[q * p_.d + j]) == 0;
      if (zero) continue;
      if ((budget_ -= static_cast<long>(open.size())) < 0) {
        exhausted_ = true;
        return;
      }
      // Cheap test first (the sums alone), then the mesh rule with w.
      auto all_covered = [&](std::uint64_t w_allowed) {
        for (int t : open) {
          for (int j = 0; j < p_.d; ++j) rest[j] = p_.targets[t][j] - w[j];
          if (!covered_by(encoder_.key(rest.data()), t, w_allowed)) return false;
        }
        return true;
      };
      if (!all_covered(~std::uint64_t{0})) continue;
      // Every basis in the box is found with its largest vector last.
      if (!chosen_.empty() && in_box(w) && !(candidates_[chosen_.back()] < w)) continue;
      std::uint64_t w_allowed = 0;
      for (int t = 0; t < s; ++t)
        if (allowed(p_, w.data(), p_.targets[t])) w_allowed |= std::uint64_t{1} << t;
      const bool all = (w_allowed >> open[0] & 1) && all_covered(w_allowed);
      if (all) record(w);
    }
  }

  // Keeps the basis of least volume (the fewest terms per target, by
  // enumeration: k is small here).
  void record(const Vec& w) {
    Candidate c;
    for (std::size_t i : chosen_) c.vectors.push_back(candidates_[i]);
    c.vectors.push_back(w);
    c.terms.assign(p_.targets.size(), {});
    const int k = c.size();
    std::vector<int> sum(p_.d);
    std::vector<int> fewest(p_.targets.size(), k + 1);
    for (std::uint32_t mask = 1; mask < (1u << k); ++mask) {
      std::fill(sum.begin(), sum.end(), 0);
      for (int b = 0; b < k; ++b)
        if (mask >> b & 1)
          for (int j = 0; j < p_.d; ++j) sum[j] += c.vectors[b][j];
      for (std::size_t t = 0; t < p_.targets.size(); ++t) {
        if (sum != p_.targets[t]) continue;
        bool ok = true;
        for (int b = 0; b < k && ok; ++b)
          if (mask >> b & 1) ok = allowed(p_, c.vectors[b].data(), p_.targets[t]);
        const int terms = __builtin_popcount(mask);
        if (ok && terms < fewest[t]) fewest[t] = terms;
      }
    }
    for (std::size_t t = 0; t < p_.targets.size(); ++t) c.volume += p_.weight[t] * fewest[t];
    if (!found_ || better(c, found_best_)) found_best_ = std::move(c), found_ = true;
  }

  const Problem& p_;
  long budget_;
  bool exhausted_ = false;
  std::vector<Vec> candidates_;  // lexicographic (the box is enumerated in order)
  std::vector<std::uint64_t> allowed_;
  Encoder encoder_;
  std::vector<std::int64_t> target_keys_;
  int k_ = 0;
  std::vector<int> sums_;                  // flat: 2^depth sums of d coordinates
  std::vector<std::uint64_t> sum_allowed_; // targets each sum may serve
  std::vector<std::size_t> chosen_;
  std::vector<std::pair<std::int64_t, std::size_t>> index_;  // sorted keys of the sums
  bool found_ = false;
  Candidate found_best_;
};

// The representations of a basis found by the search: per target the
// allowed subset with the fewest terms, ties to the smallest bit mask in
// the basis's final order. Empty when a target has none.
std::vector<std::vector<int>> terms_by_enumeration(const Problem& p, const std::vector<Vec>& vectors) {
  const int k = static_cast<int>(vectors.size());
  std::vector<std::vector<int>> terms(p.targets.size());
  std::vector<std::uint32_t> best(p.targets.size(), 0);
  std::map<Vec, std::vector<std::size_t>> where;
  for (std::size_t t = 0; t < p.targets.size(); ++t) where[p.targets[t]].push_back(t);
  Vec sum(p.d);
  for (std::uint32_t mask = 1; mask < (1u << k); ++mask) {
    std::fill(sum.begin(), sum.end(), 0);
    for (int b = 0; b < k; ++b)
      if (mask >> b & 1)
        for (int j = 0; j < p.d; ++j) sum[j] += vectors[b][j];
    auto found = where.find(sum);
    if (found == where.end()) continue;
    for (std::size_t t : found->second) {
      bool ok = true;
      for (int b = 0; b < k && ok; ++b)
        if (mask >> b & 1) ok = allowed(p, vectors[b].data(), p.targets[t]);
      if (!ok) continue;
      if (best[t] == 0 || __builtin_popcount(mask) < __builtin_popcount(best[t])) best[t] = mask;
    }
  }
  for (std::size_t t = 0; t < p.targets.size(); ++t) {
    if (best[t] == 0) return {};
    for (int b = 0; b < k; ++b)
      if (best[t] >> b & 1) terms[t].push_back(b);
  }
  return terms;
}

// Budgets (elementary steps) of the exact searches: a few milliseconds each.
constexpr long search_budget = 500000;   // a smaller basis
constexpr long volume_budget = 100000;   // the same size, less volume
constexpr long search_budget_1d = 300000;

// ---------------------------------------------------------------------------
// One dimension: the values of one coordinate.

struct Basis1D {
  std::vector<int> elements;
  std::map<int, std::vector<int>> rep;  // value -> its elements, ascending
  long volume = 0;
};

bool better1d(const Basis1D& a, const Basis1D& b) {
  return a.elements.size() < b.elements.size() ||
         (a.elements.size() == b.elements.size() && a.volume < b.volume);
}

int bit_length(long v) {
  int m = 0;
  while ((1L << m) <= v) ++m;
  return m;
}

// Values inside a core interval take the core's representation, the others
// are elements of their own.
Basis1D with_outliers(const std::map<int, long>& values, std::vector<int> core, long lo, long hi,
                      const std::function<std::vector<int>(int)>& core_rep) {
  Basis1D out;
  out.elements = std::move(core);
  for (const auto& [c, w] : values) {
    if (c >= lo && c <= hi) {
      out.rep[c] = core_rep(c);
    } else {
      out.elements.push_back(c);
      out.rep[c] = {c};
    }
    out.volume += w * static_cast<long>(out.rep[c].size());
  }
  std::sort(out.elements.begin(), out.elements.end());
  for (auto& [c, r] : out.rep) std::sort(r.begin(), r.end());
  return out;
}

std::vector<int> bits_of(long v, int sign) {
  std::vector<int> out;
  for (int b = 0; (1L << b) <= v; ++b)
    if (v >> b & 1) out.push_back(sign * static_cast<int>(1L << b));
  return out;
}

// Binary on each side up to 2^m - 1 (any m), larger values as their own
// elements: conformal, so it serves every dimension.
Basis1D binary_split(const std::map<int, long>& values) {
  Basis1D out;
  for (int sign : {-1, +1}) {
    std::map<int, long> side;
    long largest = 0;
    for (const auto& [c, w] : values)
      if ((c > 0) == (sign > 0)) side.emplace(std::abs(c), w), largest = std::max<long>(largest, std::abs(c));
    Basis1D best;
    bool have = false;
    for (int m = 0; m <= bit_length(largest); ++m) {
      std::vector<int> core;
      for (int b = 0; b < m; ++b) core.push_back(static_cast<int>(1L << b));
      Basis1D one = with_outliers(side, core, 1, (1L << m) - 1, [](int c) { return bits_of(c, 1); });
      if (!have || better1d(one, best)) best = std::move(one), have = true;
    }
    for (int e : best.elements) out.elements.push_back(sign * e);
    for (const auto& [c, r] : best.rep) {
      std::vector<int> mirrored;
      for (int e : r) mirrored.push_back(sign * e);
      out.rep[sign * c] = mirrored;
    }
    out.volume += best.volume;
  }
  std::sort(out.elements.begin(), out.elements.end());
  for (auto& [c, r] : out.rep) std::sort(r.begin(), r.end());
  return out;
}

// Periodic dimensions only: {1, 2, ..., 2^(m-1), -2^m} covers [-2^m, 2^m - 1]
// (and its mirror image), larger values as their own elements.
Basis1D signed_binary(const std::map<int, long>& values) {
  long largest = 0;
  for (const auto& entry : values) largest = std::max<long>(largest, std::abs(entry.first));
  Basis1D best;
  bool have = false;
  for (int m = 0; m <= bit_length(largest); ++m) {
    for (int sign : {+1, -1}) {
      std::vector<int> core = bits_of((1L << m) - 1, sign);
      core.push_back(-sign * static_cast<int>(1L << m));
      const long lo = sign > 0 ? -(1L << m) : -((1L << m) - 1);
      const long hi = sign > 0 ? (1L << m) - 1 : (1L << m);
      Basis1D one = with_outliers(values, core, lo, hi, [m, sign](int c) {
        if (c == 0) return std::vector<int>{};
        if ((c > 0) == (sign > 0)) return bits_of(std::abs(c), sign);
        std::vector<int> r = bits_of((1L << m) - std::abs(static_cast<long>(c)), sign);
        r.push_back(-sign * static_cast<int>(1L << m));
        return r;
      });
      if (!have || better1d(one, best)) best = std::move(one), have = true;
    }
  }
  return best;
}

Basis1D solve1d(const std::map<int, long>& values, bool conformal) {
  Basis1D best;
  for (const auto& [c, w] : values) best.elements.push_back(c), best.rep[c] = {c}, best.volume += w;
  Basis1D split = binary_split(values);
  if (better1d(split, best)) best = std::move(split);
  if (!conformal) {
    Basis1D sb = signed_binary(values);
    if (better1d(sb, best)) best = std::move(sb);
  }
  // The exact search on this dimension's values, where small.
  Problem p;
  p.d = 1;
  p.conformal = {static_cast<char>(conformal)};
  for (const auto& [c, w] : values) p.targets.push_back({c}), p.weight.push_back(w);
  const int low = ceil_log2(static_cast<long>(values.size()) + 1);
  Candidate start;
  for (int e : best.elements) start.vectors.push_back({e});
  start.volume = best.volume;
  Candidate found = start;
  if (low <= start.size() && values.size() <= 16) {
    ExactSearch(p, search_budget_1d).run(found, low, start.size());
    if (better(found, start)) {
      std::sort(found.vectors.begin(), found.vectors.end());
      const auto terms = terms_by_enumeration(p, found.vectors);
      if (!terms.empty()) {
        Basis1D exact;
        for (const Vec& v : found.vectors) exact.elements.push_back(v[0]);
        for (std::size_t t = 0; t < p.targets.size(); ++t) {
          std::vector<int> r;
          for (int b : terms[t]) r.push_back(found.vectors[b][0]);
          exact.rep[p.targets[t][0]] = r;
          exact.volume += p.weight[t] * static_cast<long>(r.size());
        }
        if (better1d(exact, best)) best = std::move(exact);
      }
    }
  }
  return best;
}

// ---------------------------------------------------------------------------
// The whole neighborhood.

// Round order: by the first nonzero dimension, then lexicographically, so a
// basis of axis vectors runs dimension by dimension, ascending values, as
// the direct algorithm does.
bool round_order(const Vec& a, const Vec& b) {
  auto lead = [](const Vec& v) {
    return static_cast<int>(std::find_if(v.begin(), v.end(), [](int c) { return c != 0; }) - v.begin());
  };
  const int la = lead(a), lb = lead(b);
  return la != lb ? la < lb : a < b;
}

// Per dimension, the best 1-D basis of the values; their union along the axes.
Candidate product_basis(const Problem& p) {
  Candidate out;
  std::vector<std::map<int, int>> index(p.d);  // dimension -> element -> vector index
  std::vector<Basis1D> per(p.d);
  for (int j = 0; j < p.d; ++j) {
    std::map<int, long> values;
    for (const Vec& t : p.targets)
      if (t[j] != 0) values[t[j]] += 1;
    per[j] = solve1d(values, p.conformal[j]);
    for (int e : per[j].elements) {
      index[j][e] = out.size();
      Vec v(p.d, 0);
      v[j] = e;
      out.vectors.push_back(std::move(v));
    }
  }
  for (const Vec& t : p.targets) {
    std::vector<int> terms;
    for (int j = 0; j < p.d; ++j)
      if (t[j] != 0)
        for (int e : per[j].rep.at(t[j])) terms.push_back(index[j].at(e));
    out.volume += static_cast<long>(terms.size());
    out.terms.push_back(std::move(terms));
  }
  return out;
}

// Vectors that every target uses together or not at all become their sum;
// vectors no target uses, or that sum to zero, go.
Candidate merge_companions(const Problem& p, const Candidate& in) {
  std::map<std::vector<int>, std::vector<int>> by_users;  // users -> vectors
  std::vector<std::vector<int>> users(in.vectors.size());
  for (std::size_t t = 0; t < in.terms.size(); ++t)
    for (int b : in.terms[t]) users[b].push_back(static_cast<int>(t));
  for (std::size_t b = 0; b < in.vectors.size(); ++b)
    if (!users[b].empty()) by_users[users[b]].push_back(static_cast<int>(b));
  Candidate out;
  std::vector<int> renamed(in.vectors.size(), -1);
  for (const auto& [who, group] : by_users) {
    Vec sum(p.d, 0);
    for (int b : group)
      for (int j = 0; j < p.d; ++j) sum[j] += in.vectors[b][j];
    if (std::all_of(sum.begin(), sum.end(), [](int c) { return c == 0; })) continue;
    for (int b : group) renamed[b] = out.size();
    out.vectors.push_back(std::move(sum));
  }
  for (const auto& terms : in.terms) {
    std::vector<int> next;
    for (int b : terms)
      if (renamed[b] >= 0 && std::find(next.begin(), next.end(), renamed[b]) == next.end()) next.push_back(renamed[b]);
    out.volume += static_cast<long>(next.size());
    out.terms.push_back(std::move(next));
  }
  return out;
}

// Puts the vectors in round order and each target's terms in ascending order.
void put_in_round_order(Candidate& c) {
  std::vector<int> order(c.vectors.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return round_order(c.vectors[a], c.vectors[b]); });
  std::vector<int> position(order.size());
  std::vector<Vec> vectors;
  for (std::size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<int>(k), vectors.push_back(c.vectors[order[k]]);
  c.vectors = std::move(vectors);
  for (auto& terms : c.terms) {
    for (int& b : terms) b = position[b];
    std::sort(terms.begin(), terms.end());
  }
}

AdditiveBasis compute_basis(const OffsetList& offsets, const std::vector<bool>& periodic) {
  Problem p;
  p.d = offsets.dims();
  p.conformal.assign(p.d, 0);
  for (int j = 0; j < p.d; ++j) p.conformal[j] = j < static_cast<int>(periodic.size()) && !periodic[j];
  std::map<Vec, int> target_of;
  for (int i = 0; i < offsets.size(); ++i) {
    Vec v(offsets[i], offsets[i] + p.d);
    if (std::any_of(v.begin(), v.end(), [](int c) { return c != 0; })) target_of.emplace(v, 0);
  }
  for (auto& [v, index] : target_of) index = static_cast<int>(p.targets.size()), p.targets.push_back(v);
  p.weight.assign(p.targets.size(), 1);

  AdditiveBasis out;
  out.lower_bound = ceil_log2(static_cast<long>(p.targets.size()) + 1);
  out.minimal = p.targets.empty();
  Candidate best;
  if (!p.targets.empty()) {
    best = merge_companions(p, product_basis(p));
    if (static_cast<int>(p.targets.size()) <= best.size()) {
      // The offsets themselves (the linear algorithm's rounds) are no worse.
      Candidate own;
      for (std::size_t t = 0; t < p.targets.size(); ++t) own.vectors.push_back(p.targets[t]), own.terms.push_back({static_cast<int>(t)});
      own.volume = static_cast<long>(p.targets.size());
      if (better(own, best)) best = std::move(own);
    }
    // A smaller basis, where the search is small enough; else, at the same
    // size, one of less volume, where that search is smaller still.
    Candidate searched = best;
    bool complete = best.size() <= out.lower_bound;
    if (!complete) complete = ExactSearch(p, search_budget).run(searched, out.lower_bound, best.size() - 1);
    if (searched.size() == best.size()) ExactSearch(p, volume_budget).run(searched, best.size(), best.size());
    out.minimal = complete;
    if (better(searched, best)) {
      std::sort(searched.vectors.begin(), searched.vectors.end(), round_order);
      searched.terms = terms_by_enumeration(p, searched.vectors);
      if (!searched.terms.empty()) best = std::move(searched);
    }
    put_in_round_order(best);
  }
  // Check what every process relies on: each term list sums to its offset
  // and stays inside the mesh.
  for (std::size_t t = 0; t < p.targets.size(); ++t) {
    Vec sum(p.d, 0);
    for (std::size_t k = 0; k < best.terms[t].size(); ++k) {
      const Vec& b = best.vectors[best.terms[t][k]];
      if ((k > 0 && best.terms[t][k] <= best.terms[t][k - 1]) || !allowed(p, b.data(), p.targets[t]))
        throw Error("iso::additive_basis: internal error: bad representation");
      for (int j = 0; j < p.d; ++j) sum[j] += b[j];
    }
    if (sum != p.targets[t]) throw Error("iso::additive_basis: internal error: terms do not sum to the offset");
  }
  out.vectors = best.vectors;
  out.terms.assign(offsets.size(), {});
  for (int i = 0; i < offsets.size(); ++i) {
    auto found = target_of.find(Vec(offsets[i], offsets[i] + p.d));
    if (found != target_of.end()) out.terms[i] = best.terms[found->second];
  }
  return out;
}

}  // namespace

AdditiveBasis additive_basis(const OffsetList& offsets, const std::vector<bool>& periodic) {
  // Callers ask again and again for one neighborhood (every process of a
  // mesh in schedule_figures, every candidate of auto): the last few results
  // are kept.
  struct Entry {
    OffsetList offsets;
    std::vector<bool> conformal;
    AdditiveBasis basis;
  };
  static std::mutex mutex;
  static std::vector<Entry> recent;
  std::vector<bool> conformal(static_cast<std::size_t>(offsets.dims()), false);
  for (int j = 0; j < offsets.dims(); ++j) conformal[j] = j < static_cast<int>(periodic.size()) && !periodic[j];
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const Entry& entry : recent)
      if (entry.conformal == conformal && entry.offsets == offsets) return entry.basis;
  }
  AdditiveBasis basis = compute_basis(offsets, periodic);
  std::lock_guard<std::mutex> lock(mutex);
  recent.insert(recent.begin(), Entry{offsets, conformal, basis});
  if (recent.size() > 8) recent.pop_back();
  return basis;
}

}  // namespace iso
