// Kokkos' own command line (--kokkos-num-threads=2, --kokkos-device-id=1,
// --kokkos-help, ...) in a program that has its own parser: the flags are
// split off argv before that parser sees them (it would reject them) and
// handed to Kokkos::initialize, which also reads KOKKOS_* from the
// environment. Header-only, so any program on Kokkos can use it:
//
//   int main(int argc, char** argv) {
//     isostencil::driver::init_mpi_funneled(argc, argv, "my-program");  // or your own MPI_Init_thread
//     isostencil::driver::KokkosArgs kokkos(argc, argv);   // argv keeps the rest
//     if (kokkos.help()) { if (rank == 0) kokkos.print_help(); ... return 0; }
//     ... parse argc/argv ...
//     isostencil::driver::KokkosScope scope(kokkos);       // Kokkos::initialize .. finalize
//   }
//
// The flags reach Kokkos in the spelling the Kokkos in use reads: a value may
// follow as the next argument (`--kokkos-num-threads 2`, which Kokkos itself
// refuses) and is joined to `--kokkos-num-threads=2`; Kokkos before 3.7 knows
// the thread count as --kokkos-threads, so --kokkos-num-threads is renamed
// there. Everything else is passed on as written: Kokkos judges it.
#pragma once

#include "isostencil/driver/kokkos_flags.hpp"

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace isostencil::driver {

/// Kokkos' flags of one command line.
class KokkosArgs {
public:
  KokkosArgs() = default;

  /// Moves every --kokkos-* argument (with the value of a two-token form) out
  /// of argv; argc shrinks and argv[argc] stays a null pointer. Arguments
  /// after a bare "--" are left alone.
  KokkosArgs(int& argc, char** argv) {
    if (argc > 0 && argv[0] != nullptr) program_ = argv[0];
    int kept = argc > 0 ? 1 : 0;
    bool options_end = false;
    for (int i = kept; i < argc; ++i) {
      const std::string arg = argv[i];
      if (options_end || arg.rfind("--kokkos-", 0) != 0) {
        options_end = options_end || arg == "--";
        argv[kept++] = argv[i];
        continue;
      }
      const std::size_t equals = arg.find('=');
      std::string name = arg.substr(0, equals);
      std::string flag = arg;
      // A tool's arguments may well begin with '-'; any other value may not.
      if (equals == std::string::npos && kokkos_flag_takes_value(name) && i + 1 < argc &&
          (argv[i + 1][0] != '-' || name == "--kokkos-tools-args"))
        flag = name + "=" + argv[++i];
#if KOKKOS_VERSION < 30700
      if (name == "--kokkos-num-threads") {
        name = "--kokkos-threads";
        flag = name + flag.substr(std::strlen("--kokkos-num-threads"));
      }
#endif
      help_ = help_ || name == "--kokkos-help";
      flags_.push_back(flag);
    }
    for (int i = kept; i < argc; ++i) argv[i] = nullptr;
    argc = kept;
  }

  /// The flags as Kokkos::initialize gets them.
  const std::vector<std::string>& flags() const { return flags_; }
  /// --kokkos-help was given: print_help() and exit 0 instead of running.
  bool help() const { return help_; }

  /// Kokkos::initialize with these flags (and KOKKOS_* from the environment).
  /// Throws (std::runtime_error from Kokkos) for a malformed flag.
  void initialize() const {
    std::vector<std::string> storage;
    storage.push_back(program_.empty() ? std::string("program") : program_);
    storage.insert(storage.end(), flags_.begin(), flags_.end());
    std::vector<char*> argv;
    for (std::string& item : storage) argv.push_back(item.data());
    argv.push_back(nullptr);
    int argc = static_cast<int>(storage.size());
    Kokkos::initialize(argc, argv.data());
  }

  /// Kokkos' own help (it prints it while initializing), then finalize.
  void print_help() const {
    initialize();
    Kokkos::finalize();
  }

private:
  std::string program_;
  std::vector<std::string> flags_;
  bool help_ = false;
};

/// Kokkos from construction to destruction, initialized with `args` unless
/// it already runs (then this scope leaves it to its owner).
class KokkosScope {
public:
  explicit KokkosScope(const KokkosArgs& args) : owner_(!Kokkos::is_initialized()) {
    if (owner_) args.initialize();
  }
  ~KokkosScope() {
    if (owner_ && Kokkos::is_initialized()) Kokkos::finalize();
  }
  KokkosScope(const KokkosScope&) = delete;
  KokkosScope& operator=(const KokkosScope&) = delete;

private:
  bool owner_;
};

/// "Kokkos 3.4.1 (Serial, OpenMP)": the version and the enabled backends.
inline std::string kokkos_description() {
  std::string backends;
  const auto add = [&backends](const char* name) {
    backends += (backends.empty() ? "" : ", ") + std::string(name);
  };
#ifdef KOKKOS_ENABLE_SERIAL
  add("Serial");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  add("OpenMP");
#endif
#ifdef KOKKOS_ENABLE_THREADS
  add("Threads");
#endif
#ifdef KOKKOS_ENABLE_HPX
  add("HPX");
#endif
#ifdef KOKKOS_ENABLE_CUDA
  add("Cuda");
#endif
#ifdef KOKKOS_ENABLE_HIP
  add("HIP");
#endif
#ifdef KOKKOS_ENABLE_SYCL
  add("SYCL");
#endif
#ifdef KOKKOS_ENABLE_OPENMPTARGET
  add("OpenMPTarget");
#endif
#ifdef KOKKOS_ENABLE_OPENACC
  add("OpenACC");
#endif
  return "Kokkos " + std::to_string(KOKKOS_VERSION / 10000) + "." +
         std::to_string(KOKKOS_VERSION / 100 % 100) + "." + std::to_string(KOKKOS_VERSION % 100) +
         " (" + backends + ")";
}

/// The default execution space's name ("OpenMP"); known before initialize.
inline std::string execution_space_name() { return Kokkos::DefaultExecutionSpace::name(); }

/// Its concurrency (threads of a host space); Kokkos must be initialized.
/// An instance's member in Kokkos 4, a static function in 3.x: the call
/// through an instance compiles with both.
inline int execution_space_concurrency() {
  return static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency());
}

/// MPI_Init_thread(MPI_THREAD_FUNNELED): only the host thread calls MPI, while
/// Kokkos' threads (OpenMP) exist. Returns false, after rank 0 printed why,
/// where the initialization failed or the library provides a lower level
/// (MPI is then finalized again); the caller exits with an error.
inline bool init_mpi_funneled(int& argc, char**& argv, const char* program) {
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "%s: MPI_Init_thread failed\n", program);
    return false;
  }
  if (provided < MPI_THREAD_FUNNELED) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      std::fprintf(stderr,
                   "%s: error: the MPI library provides thread level %d, below "
                   "MPI_THREAD_FUNNELED (%d), which Kokkos' host threads need; use an MPI "
                   "built with thread support\n",
                   program, provided, MPI_THREAD_FUNNELED);
    MPI_Finalize();
    return false;
  }
  return true;
}

}  // namespace isostencil::driver
