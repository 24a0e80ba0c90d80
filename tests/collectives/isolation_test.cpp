// User point-to-point traffic on the parent Cartesian communicator (and on
// MPI_COMM_WORLD) while an operation is in flight, with the tags the
// collectives use for their rounds (0..k), must neither steal nor be stolen by
// the operation's messages.
#include "collectives_support.hpp"

#include <gtest/gtest.h>

namespace iso_collectives_test {
namespace {

// Payload of user message `tag` from `rank`.
int payload(int rank, int tag, int k) {
  return 1000000 + rank * 1000 + tag * 10 + k;
}

std::string user_traffic_round(MPI_Comm user_comm, Exchange& ex, int generation,
                               bool any_source_first) {
  const int tags = 16;  // more than the operation has rounds
  const int width = 3;
  int rank = 0, size = 1;
  MPI_Comm_rank(user_comm, &rank);
  MPI_Comm_size(user_comm, &size);
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  std::vector<int> inbox(static_cast<std::size_t>(tags * width), -1);
  std::vector<int> outbox(static_cast<std::size_t>(tags * width));
  std::vector<MPI_Request> requests;
  std::vector<MPI_Status> statuses(static_cast<std::size_t>(2 * tags));
  auto post_receives = [&] {
    for (int t = 0; t < tags; ++t) {
      requests.emplace_back();
      // Wildcards would catch the operation's messages if they used user_comm.
      MPI_Irecv(inbox.data() + t * width, width, MPI_INT, any_source_first ? MPI_ANY_SOURCE : left,
                any_source_first ? MPI_ANY_TAG : t, user_comm, &requests.back());
    }
  };
  ex.prepare(generation);
  if (any_source_first) post_receives();
  ex.op().start();
  if (!any_source_first) post_receives();
  for (int t = 0; t < tags; ++t) {
    for (int k = 0; k < width; ++k)
      outbox[static_cast<std::size_t>(t * width + k)] = payload(rank, t, k);
    requests.emplace_back();
    MPI_Isend(outbox.data() + t * width, width, MPI_INT, right, t, user_comm, &requests.back());
  }
  ex.op().test();
  ex.op().wait();
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data());
  std::string failure = ex.check(generation);
  // With wildcards the messages arrive in send order from the one sender
  // (non-overtaking): receive t holds tag t.
  for (int t = 0; t < tags; ++t) {
    const MPI_Status& status = statuses[static_cast<std::size_t>(t)];
    bool good = status.MPI_SOURCE == left && status.MPI_TAG == t;
    for (int k = 0; k < width; ++k)
      good = good && inbox[static_cast<std::size_t>(t * width + k)] == payload(left, t, k);
    if (!good && failure.empty())
      failure = "user message " + std::to_string(t) + " from rank " +
                std::to_string(status.MPI_SOURCE) + " tag " + std::to_string(status.MPI_TAG) +
                " holds " + std::to_string(inbox[static_cast<std::size_t>(t * width)]) +
                ", expected " + std::to_string(payload(left, t, 0));
  }
  return failure;
}

TEST(CollectivesIsolation, UserTrafficOnParentCommunicatorWhileInFlight) {
  iso::CartComm cart(MPI_COMM_WORLD, dims_create(2), {true, true});
  iso::Neighborhood nbh(cart.get(), iso::OffsetList::moore(2, 2));
  ScopedLayouts layouts(make_layout_pair(0, 3));
  const iso::Collective collectives[] = {iso::Collective::alltoall, iso::Collective::allgather};
  const iso::Algorithm algorithms[] = {iso::Algorithm::linear, iso::Algorithm::torus, iso::Algorithm::direct,
                                       iso::Algorithm::basis};
  int generation = 1;
  for (iso::Collective collective : collectives)
    for (iso::Algorithm algorithm : algorithms) {
      Exchange ex(nbh, layouts.get(), collective, algorithm);
      for (MPI_Comm user_comm : {cart.get(), MPI_COMM_WORLD})
        for (bool wildcards : {true, false}) {
          std::string failure;
          {
            Watchdog watchdog("user traffic during " + ex.name(), 60);
            failure = user_traffic_round(user_comm, ex, generation++, wildcards);
          }
          const bool ok = all_ranks(failure.empty());
          if (!failure.empty())
            ADD_FAILURE() << ex.name()
                          << (user_comm == MPI_COMM_WORLD ? " on MPI_COMM_WORLD"
                                                          : " on the cart comm")
                          << (wildcards ? " (wildcard receives posted first)" : "") << ", rank "
                          << world_rank() << ": " << failure;
          if (!ok && world_rank() == 0)
            ADD_FAILURE() << "user traffic isolation failed on some rank(s)";
        }
    }
}

}  // namespace
}  // namespace iso_collectives_test
