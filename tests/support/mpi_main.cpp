// The one main of every gtest executable: MPI -> Kokkos -> gtest, with the
// exit code agreed over MPI_COMM_WORLD so every rank (and so mpiexec and ctest)
// reports the same result. Rank 0 prints gtest's usual output; the other ranks
// print only their failures, prefixed with their rank, so a failure on any rank
// is visible without N copies of every passing line.
#include "isostencil/driver/kokkos_args.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

class RankFailurePrinter : public ::testing::EmptyTestEventListener {
public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}

  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    const char* file = result.file_name() != nullptr ? result.file_name() : "unknown file";
    if (result.line_number() >= 0) {
      std::printf("[rank %d] %s:%d: Failure\n%s\n", rank_, file, result.line_number(),
                  result.message());
    } else {
      std::printf("[rank %d] %s: Failure\n%s\n", rank_, file, result.message());
    }
    std::fflush(stdout);
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (!info.result()->Failed()) return;
    std::printf("[rank %d] [  FAILED  ] %s.%s\n", rank_, info.test_suite_name(), info.name());
    std::fflush(stdout);
  }

private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  // FUNNELED: only the main thread calls MPI, also with a threaded Kokkos backend.
  if (!isostencil::driver::init_mpi_funneled(argc, argv, "isostencil-test")) return 2;
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  // Kokkos' flags (--kokkos-num-threads=2, ...) and KOKKOS_* go to Kokkos in
  // the spelling it reads; gtest gets the rest.
  const isostencil::driver::KokkosArgs kokkos(argc, argv);
  if (kokkos.help()) {
    if (rank == 0) kokkos.print_help();
    MPI_Finalize();
    return 0;
  }
  kokkos.initialize();
  ::testing::InitGoogleTest(&argc, argv);

  if (rank != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
    // Only rank 0 writes --gtest_output reports; the ranks would overwrite one file.
#ifdef GTEST_FLAG_SET
    GTEST_FLAG_SET(output, "");
#else
    ::testing::GTEST_FLAG(output) = "";
#endif
  }

  const int local_result = RUN_ALL_TESTS();

  int result = 0;
  MPI_Allreduce(&local_result, &result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  std::vector<int> results(rank == 0 ? static_cast<std::size_t>(size) : 0U);
  MPI_Gather(&local_result, 1, MPI_INT, results.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0 && result != 0) {
    std::string failed_ranks;
    for (int r = 0; r < size; ++r) {
      if (results[static_cast<std::size_t>(r)] != 0) {
        failed_ranks += (failed_ranks.empty() ? "" : ",") + std::to_string(r);
      }
    }
    std::printf("[isostencil-test] FAILED on rank(s) %s of %d\n", failed_ranks.c_str(), size);
    std::fflush(stdout);
  }

  Kokkos::finalize();
  MPI_Finalize();
  return result;
}
