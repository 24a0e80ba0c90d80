// Checks shared by the schedule tests (schedule_checks.cpp): the spec's
// closed formulas, the implementation simulated for every process, random
// cases, and the per-case checks that collect findings.
#pragma once

#include "simulator.hpp"

#include "iso/geometry.hpp"
#include "iso/schedule.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace schedtest {

/// The algorithms of the spec's closed formulas, every scheduled one, and
/// both collectives.
extern const iso::Algorithm kAlgorithms[3];
extern const iso::Algorithm kScheduled[4];
extern const iso::Collective kCollectives[2];

long ipow(long base, int exp);
/// Rounds of the direct algorithm by the spec's formula.
long direct_rounds(const iso::OffsetList& v);
/// Runs the implementation for every process and the simulator on the result.
SimResult simulate_impl(const iso::OffsetList& v, const iso::CartGeometry& grid, iso::Algorithm algorithm,
                        iso::Collective collective);
long term_volume(const iso::AdditiveBasis& basis);
/// Empty when the basis meets the spec; else what it violates.
std::string basis_violation(const iso::OffsetList& v, const std::vector<bool>& periodic);
/// What is wrong with the messages the steps of every process's schedule
/// post with `ports` (iso::step_messages), empty when they pair up.
std::string step_messages_violation(const std::vector<iso::Schedule>& all, int ports);

struct Case {
  iso::OffsetList offsets;
  iso::CartGeometry grid;
};
std::string describe_case(const Case& c);
Case random_case(std::mt19937_64& rng, int max_procs);
/// ISO_SCHEDULE_TEST_SEED or the fixed default.
std::uint64_t base_seed();

/// Collects failures per category and reports the first few of each.
struct Findings {
  std::map<std::string, std::vector<std::string>> items;
  std::map<std::string, long> counts;
  void add(const std::string& category, const std::string& text) {
    ++counts[category];
    if (items[category].size() < 4) items[category].push_back(text);
  }
  void report() const {
    for (const auto& [category, n] : counts) {
      std::string text = category + ": " + std::to_string(n) + " failing case(s); first ones:\n";
      for (const std::string& item : items.at(category)) text += item + "\n";
      ADD_FAILURE() << text;
    }
  }
};

/// Every scheduled algorithm and both collectives on one case.
void check_all_algorithms(const Case& c, const std::string& tag, Findings& findings, bool with_figures);

}  // namespace schedtest
