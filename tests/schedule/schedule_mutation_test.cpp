// The schedule computation refuses bad input, and the simulator rejects
// broken schedules (each mutation of a correct one must be caught).
#include "schedule_checks.hpp"


#include "iso/cost_model.hpp"
#include "iso/error.hpp"
#include "iso/schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

using namespace schedtest;

TEST(ScheduleBadInput, WrongDimension) {
  const OffsetList v(3, {1, 0, 0, 0, 1, 0});
  const CartGeometry grid = make_torus({2, 2});
  const std::vector<int> coords{0, 0, 0};
  for (Algorithm a : kScheduled)
    for (Collective c : kCollectives) {
      EXPECT_THROW(iso::build_schedule(v, grid, coords.data(), a, c), iso::Error) << describe(v, grid, a, c);
      EXPECT_THROW(iso::schedule_figures(v, grid, a, c), iso::Error) << describe(v, grid, a, c);
    }
  // Algorithms without a schedule of their own.
  const OffsetList ok(2, {1, 0, 0, 1});
  for (Algorithm a : {Algorithm::mpi, Algorithm::automatic, Algorithm::tune})
    for (Collective c : kCollectives)
      EXPECT_THROW(iso::build_schedule(ok, grid, coords.data(), a, c), iso::Error) << iso::to_string(a);
  const OffsetList w(1, {1, -1});
  const CartGeometry grid3 = make_mesh({2, 2, 2});
  EXPECT_THROW(iso::build_schedule(w, grid3, coords.data(), Algorithm::torus, Collective::alltoall), iso::Error);
}

TEST(ScheduleBadInput, ParseAlgorithm) {
  for (const char* bad : {"bogus", "", "Linear ", "torus direct", "hop "}) {
    try {
      iso::parse_algorithm(bad);
      ADD_FAILURE() << "parse_algorithm(\"" << bad << "\") did not throw";
    } catch (const iso::Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("linear"), std::string::npos) << what;
      EXPECT_NE(what.find("torus"), std::string::npos) << what;
      EXPECT_NE(what.find("direct"), std::string::npos) << what;
      EXPECT_NE(what.find("basis"), std::string::npos) << what;
      EXPECT_NE(what.find("mpi"), std::string::npos) << what;
      EXPECT_NE(what.find("auto"), std::string::npos) << what;
    }
  }
}

TEST(ScheduleBadInput, OffsetListErrors) {
  EXPECT_THROW(OffsetList::parse("1,0;1"), iso::Error);
  EXPECT_THROW(OffsetList::parse("1,a"), iso::Error);
  EXPECT_THROW(OffsetList::parse("1,,2"), iso::Error);
  EXPECT_THROW(OffsetList::parse("1.5,2"), iso::Error);
  EXPECT_THROW(OffsetList::parse(""), iso::Error);
  EXPECT_THROW(OffsetList::parse(";;"), iso::Error);
  EXPECT_THROW(OffsetList(2, {1, 2, 3}), iso::Error);
  EXPECT_THROW(OffsetList(0, {}), iso::Error);
  EXPECT_THROW(OffsetList::moore(0, 1), iso::Error);
  EXPECT_THROW(OffsetList::moore(2, -1), iso::Error);
  OffsetList v(2, {1, 0});
  EXPECT_THROW(v.push_back({1, 2, 3}), iso::Error);

  const OffsetList p = OffsetList::parse(" 1, 0,0 ;0,1 ,1;-2,3,4;");
  EXPECT_EQ(p.dims(), 3);
  EXPECT_EQ(p.size(), 3);
  EXPECT_EQ(p.flat(), (std::vector<int>{1, 0, 0, 0, 1, 1, -2, 3, 4}));
  EXPECT_EQ(OffsetList::moore(2, 1).size(), 8);
  EXPECT_EQ(OffsetList::moore(2, 1, true).size(), 9);
}

// ===========================================================================
// Mutation check: the simulator must reject broken schedules.

namespace {

struct Mutation {
  std::string name;
  std::vector<Schedule> schedules;
};

std::vector<Mutation> mutate(const std::vector<Schedule>& good, const CartGeometry& grid) {
  std::vector<Mutation> out;
  auto first = [&](const std::function<bool(std::vector<Schedule>&)>& apply, const std::string& name) {
    std::vector<Schedule> copy = good;
    if (apply(copy)) out.push_back({name, std::move(copy)});
  };
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        for (std::size_t k = 1; k < r.recv.size(); ++k)
          if (r.recv[k] != r.recv[0]) {
            std::swap(r.recv[0], r.recv[k]);
            return true;
          }
    return false;
  }, "swap two receive entries");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        for (auto& ref : r.recv)
          if (ref.buffer == Buffer::temp) {
            ref.buffer = Buffer::recv;
            return true;
          }
    return false;
  }, "receive into R instead of T");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        for (auto& ref : r.recv)
          if (ref.buffer == Buffer::temp2) {
            ref.buffer = Buffer::recv;
            return true;
          }
    return false;
  }, "receive into R instead of T2");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      if (!sc.copies.empty()) {
        sc.copies.pop_back();
        return true;
      }
    return false;
  }, "drop a local copy");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        for (auto& ref : r.send)
          if (ref.buffer != Buffer::send && sc.num_blocks > 1) {
            ref.block = (ref.block + 1) % sc.num_blocks;
            return true;
          }
    return false;
  }, "corrupt a send BlockRef");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        if (r.send.size() > 1) {
          r.send.pop_back();
          return true;
        }
    return false;
  }, "drop one send entry");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        if (!r.send.empty() && !r.recv.empty() && r.send[0].buffer != Buffer::send) {
          r.recv[0] = r.send[0];
          return true;
        }
    return false;
  }, "read and write one slot in a round");
  first([&grid](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        if (r.recv_rank >= 0 && grid.num_procs() > 1) {
          r.recv_rank = (r.recv_rank + 1) % grid.num_procs();
          return true;
        }
    return false;
  }, "wrong recv_rank");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      if (!sc.rounds.empty()) {
        sc.rounds.erase(sc.rounds.begin());
        return true;
      }
    return false;
  }, "drop a round");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (std::size_t i = 0; i < sc.uses_temp.size(); ++i)
        if (sc.uses_temp[i]) {
          sc.uses_temp[i] = 0;
          return true;
        }
    return false;
  }, "clear a uses_temp flag");
  first([](std::vector<Schedule>& all) {
    for (auto& sc : all)
      for (auto& r : sc.rounds)
        if (r.send.size() > 1) {
          std::swap(r.send.front(), r.send.back());
          return r.send.front() != r.send.back();
        }
    return false;
  }, "swap two send entries");
  return out;
}

void expect_mutations_rejected(const std::vector<Schedule>& good, const OffsetList& v, const CartGeometry& grid,
                               Collective c, const std::string& what, std::set<std::string>& seen) {
  ASSERT_TRUE(schedtest::simulate(v, grid, c, good).ok()) << what << "\n"
                                                          << schedtest::simulate(v, grid, c, good).summary();
  for (const Mutation& m : mutate(good, grid)) {
    seen.insert(m.name);
    EXPECT_FALSE(schedtest::simulate(v, grid, c, m.schedules).ok()) << what << ": mutation not detected: " << m.name;
  }
}

}  // namespace

TEST(ScheduleSimulator, DetectsBrokenSchedules) {
  const std::vector<std::pair<OffsetList, CartGeometry>> items = {
      {OffsetList(2, {0, 0, 1, 1, -1, 2, 2, 0, 1, 1, 2, -1}), make_torus({3, 4})},
      {OffsetList(2, {0, 0, 1, 1, -1, 2, 2, 0, 1, 1, 2, -1}), make_mesh({3, 4})},
      {OffsetList(2, {2, 2, 0, 0, 1, -2}), make_mesh({3, 3})},
      {OffsetList(4, {1, -1, 0, 0, 1, 0, 0, 1}), make_torus({2, 2, 2, 2})},
      {OffsetList::moore(2, 1, true), make_mesh({3, 3})},
  };
  std::set<std::string> seen_ref, seen_impl;
  for (const auto& [v, grid] : items)
    for (Algorithm a : kScheduled)
      for (Collective c : kCollectives) {
        const std::string what = describe(v, grid, a, c);
        expect_mutations_rejected(schedtest::ref::build_all(v, grid, a, c), v, grid, c, "reference " + what,
                                  seen_ref);
        const auto impl = schedtest::build_all(v, grid, a, c);
        if (schedtest::simulate(v, grid, c, impl).ok())
          expect_mutations_rejected(impl, v, grid, c, "implementation " + what, seen_impl);
      }
  // Every kind of mutation was exercised at least once on the reference.
  EXPECT_EQ(seen_ref.size(), 11u);
  for (const auto& name : seen_ref) std::printf("  mutation exercised: %s\n", name.c_str());
}

// Two processes along a periodic dimension are the partner of both its
// directions: a step sends them one message, and the check of the pairing
// notices a process that does not merge while its partner does.
TEST(ScheduleStepMessages, OnePerPartnerAndDirection) {
  for (Algorithm a : {Algorithm::linear, Algorithm::torus})
    for (Collective c : kCollectives) {
      const OffsetList v = OffsetList::moore(3, 1);
      const CartGeometry grid = make_torus({2, 1, 1});
      std::vector<Schedule> all = schedtest::build_all(v, grid, a, c);
      ASSERT_EQ(all.size(), 2u);
      EXPECT_EQ(step_messages_violation(all, 0), "") << describe(v, grid, a, c);
      long messages = 0;
      iso::StepMessages posted;
      for (const iso::ExecutionStep& step : iso::execution_steps(all[0], 0, 0)) {
        iso::step_messages(all[0], step, 0, posted);
        for (const iso::StepMessage& message : posted.messages) {
          EXPECT_EQ(message.peer, 1);
          ++messages;
        }
      }
      // One each way: linear's 18 rounds to the other process, torus's two
      // of dimension 0 (dimensions 1 and 2 are copies).
      EXPECT_EQ(messages, 2) << describe(v, grid, a, c);
      all[0].merges_partners = false;
      EXPECT_NE(step_messages_violation(all, 0), "") << describe(v, grid, a, c);
    }
  // On a mesh nothing merges: every round is its own message.
  const OffsetList v = OffsetList::moore(2, 1);
  const std::vector<Schedule> mesh = schedtest::build_all(v, make_mesh({2, 3}), Algorithm::linear, Collective::alltoall);
  for (std::size_t rank = 0; rank < mesh.size(); ++rank) {
    EXPECT_FALSE(mesh[rank].merges_partners);
    long messages = 0;
    iso::StepMessages posted;
    for (const iso::ExecutionStep& step : iso::execution_steps(mesh[rank], 0, static_cast<int>(rank))) {
      iso::step_messages(mesh[rank], step, static_cast<int>(rank), posted);
      messages += static_cast<long>(posted.messages.size());
    }
    long rounds = 0;
    for (const iso::Round& round : mesh[rank].rounds) rounds += !round.send.empty() + !round.recv.empty();
    EXPECT_EQ(messages, rounds);
  }
  EXPECT_EQ(step_messages_violation(mesh, 0), "");
}
