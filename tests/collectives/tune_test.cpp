// Algorithm::tune: the operation it returns is the candidate of least
// measured time, the same on every rank, and exchanges correctly; the port
// limit given is kept; other algorithms report no trials.
#include "collectives_support.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace iso_collectives_test {
namespace {

std::string describe(const std::vector<iso::TuneTrial>& trials) {
  std::string text;
  for (const iso::TuneTrial& t : trials)
    text += std::string(iso::to_string(t.algorithm)) + ":p" + std::to_string(t.ports) + "x" +
            std::to_string(t.calls) + "=" + std::to_string(t.seconds) + " ";
  return text;
}

// "" when the trials are well formed and `op` is their first least time.
std::string check_choice(const iso::Operation& op, int ports_given) {
  const std::vector<iso::TuneTrial>& trials = op.tune_trials();
  if (trials.empty()) return "no trials";
  std::size_t best = 0;
  for (std::size_t k = 0; k < trials.size(); ++k) {
    const iso::TuneTrial& t = trials[k];
    if (t.algorithm == iso::Algorithm::tune || t.algorithm == iso::Algorithm::automatic)
      return "a trial of " + std::string(iso::to_string(t.algorithm));
    if (t.calls < 1 || t.calls > 5) return "a trial of " + std::to_string(t.calls) + " calls";
    if (!(t.seconds > 0)) return "a trial of " + std::to_string(t.seconds) + " s";
    if (ports_given > 0 && t.algorithm != iso::Algorithm::mpi && t.ports != ports_given)
      return "a trial at " + std::to_string(t.ports) + " ports, not the " + std::to_string(ports_given) + " given";
    if (t.seconds < trials[best].seconds) best = k;
  }
  if (op.algorithm() != trials[best].algorithm || op.ports() != trials[best].ports)
    return std::string("runs ") + iso::to_string(op.algorithm()) + ":p" + std::to_string(op.ports()) +
           " but the least time is " + iso::to_string(trials[best].algorithm) + ":p" +
           std::to_string(trials[best].ports);
  return {};
}

TEST(CollectivesTune, ChoosesItsFastestTrialOnEveryRankAndExchangesCorrectly) {
  iso::CartComm cart2(MPI_COMM_WORLD, dims_create(2), {true, false});
  iso::CartComm cart3(MPI_COMM_WORLD, dims_create(3), {true, true, true});
  // Repeats, a zero vector, an offset beyond small grids; and Moore 3:1.
  iso::Neighborhood irregular(cart2.get(), iso::OffsetList(2, {1, 0, 0, -2, 1, 1, 0, 0, 1, 0, -3, 1, 2, -1}));
  iso::Neighborhood moore(cart3.get(), iso::OffsetList::moore(3, 1));
  for (const iso::Neighborhood* nbh : {&irregular, &moore})
    for (int kind : {0, 6}) {
      ScopedLayouts layouts(make_layout_pair(kind, 5));
      for (iso::Collective collective : {iso::Collective::alltoall, iso::Collective::allgather}) {
        Exchange ex(*nbh, layouts.get(), collective, iso::Algorithm::tune);
        std::string failure = check_choice(ex.op(), 0);
        // Every rank measured the same maxima and made the same choice.
        if (!same_on_all_ranks(describe(ex.op().tune_trials()) + iso::to_string(ex.op().algorithm()) +
                               std::to_string(ex.op().ports())) &&
            failure.empty())
          failure = "the trials or the choice differ between ranks: " + describe(ex.op().tune_trials());
        for (int generation = 1; generation <= 3 && failure.empty(); ++generation) {
          ex.prepare(generation);
          ex.op().run();
          failure = ex.check(generation);
        }
        const bool ok = all_ranks(failure.empty());
        if (!failure.empty()) ADD_FAILURE() << ex.name() << " rank " << world_rank() << ": " << failure;
        EXPECT_TRUE(ok) << ex.name();
      }
    }
}

TEST(CollectivesTune, KeepsTheGivenPortLimitAndOthersHaveNoTrials) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(3), {true, true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(3, 1));
  const int s = nbh.size();
  std::vector<int> send(static_cast<std::size_t>(s) * 2, world_rank()), recv(send.size(), -1);
  iso::OperationOptions options;
  options.algorithm = iso::Algorithm::tune;
  options.ports = 2;
  iso::Operation tuned = iso::alltoall_init(nbh, send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, options);
  std::string failure = check_choice(tuned, 2);
  tuned.run();
  for (int i = 0; i < s && failure.empty(); ++i)
    if (recv[2 * static_cast<std::size_t>(i)] != nbh.source_rank(i))
      failure = "block " + std::to_string(i) + " holds " + std::to_string(recv[2 * static_cast<std::size_t>(i)]) +
                ", not source rank " + std::to_string(nbh.source_rank(i));
  options.algorithm = iso::Algorithm::direct;
  options.ports = 3;
  iso::Operation plain = iso::alltoall_init(nbh, send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, options);
  if (failure.empty() && !plain.tune_trials().empty()) failure = "direct reports tune trials";
  if (failure.empty() && plain.ports() != 3) failure = "direct runs at " + std::to_string(plain.ports()) + " ports";
  const bool ok = all_ranks(failure.empty());
  if (!failure.empty()) ADD_FAILURE() << "rank " << world_rank() << ": " << failure;
  EXPECT_TRUE(ok);
}

}  // namespace
}  // namespace iso_collectives_test
