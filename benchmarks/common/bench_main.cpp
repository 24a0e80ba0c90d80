#include "bench_main.hpp"

#include <cstdio>
#include <exception>
#include <sstream>
#include <utility>

namespace isobench {

BenchMain::BenchMain(int& argc, char**& argv, std::string program)
    : argc_(argc), argv_(argv), program_(std::move(program)) {
  MPI_Init(&argc, &argv);
  argc_ = argc;
  argv_ = argv;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
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
