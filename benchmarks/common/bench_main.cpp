#include "bench_main.hpp"

#include "isostencil/driver/kokkos_flags.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <utility>

namespace isobench {

BenchMain::BenchMain(int& argc, char**& argv, std::string program)
    : argc_(argc), argv_(argv), program_(std::move(program)) {
  // FUNNELED: only the main thread calls MPI, while Kokkos' threads exist.
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (provided < MPI_THREAD_FUNNELED) {
    if (rank_ == 0)
      std::fprintf(stderr, "%s: error: MPI provides thread level %d, below MPI_THREAD_FUNNELED\n",
                   program_.c_str(), provided);
    MPI_Finalize();
    std::exit(2);
  }
  // Kokkos' flags (--kokkos-num-threads=2, ...) stay in argv for the
  // benchmark's Kokkos::ScopeGuard(argc, argv), a two-token value joined
  // (`--kokkos-num-threads 2`, which Kokkos refuses); CLI11 parses the rest.
  std::vector<std::string> kokkos, rest;
  bool options_end = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (options_end || arg.rfind("--kokkos-", 0) != 0) {
      options_end = options_end || arg == "--";
      rest.push_back(arg);
      continue;
    }
    if (arg.find('=') == std::string::npos && isostencil::driver::kokkos_flag_takes_value(arg) && i + 1 < argc &&
        (argv[i + 1][0] != '-' || arg == "--kokkos-tools-args"))
      kokkos.push_back(arg + "=" + argv[++i]);
    else
      kokkos.push_back(arg);
  }
  storage_.push_back(argc > 0 ? argv[0] : program_);
  storage_.insert(storage_.end(), kokkos.begin(), kokkos.end());
  storage_.insert(storage_.end(), rest.begin(), rest.end());
  for (std::string& item : storage_) all_.push_back(item.data());
  all_.push_back(nullptr);
  cli_.push_back(all_[0]);
  for (std::size_t i = 1 + kokkos.size(); i + 1 < all_.size(); ++i) cli_.push_back(all_[i]);
  cli_.push_back(nullptr);
  argc = static_cast<int>(all_.size()) - 1;
  argv = all_.data();
  argc_ = static_cast<int>(cli_.size()) - 1;
  argv_ = cli_.data();
}

BenchMain::~BenchMain() { MPI_Finalize(); }

std::optional<int> BenchMain::parse(CLI::App& app) const {
  try {
    app.parse(argc_, argv_);
  } catch (const CLI::ParseError& error) {
    // Every rank parses the same line; one copy of the message is enough.
    if (rank_ == 0) return app.exit(error);
    std::ostringstream sink;
    return app.exit(error, sink, sink);
  }
  return std::nullopt;
}

int BenchMain::run(const std::function<int()>& body) const {
  try {
    return body();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: rank %d: %s\n", program_.c_str(), rank_, error.what());
    return 1;
  }
}

}  // namespace isobench
