// Stop signals for `isostencil run`: see signals.hpp.
#include "isostencil/driver/signals.hpp"

#include "iso/error.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <ctime>

#include <signal.h>
#include <unistd.h>

namespace isostencil::driver {

namespace {

constexpr int stop_signals[] = {SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGXCPU};

volatile std::sig_atomic_t received = 0;
volatile std::sig_atomic_t received_at = 0;  // CLOCK_MONOTONIC seconds of the first

// Launchers often deliver one request twice (Slurm signals every process of
// the job, mpirun forwards the signal as well): a signal within this many
// seconds of the first is the same request.
constexpr long duplicate_seconds = 3;

long monotonic_seconds() {  // clock_gettime is async-signal-safe
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long>(now.tv_sec);
}
struct sigaction previous[sizeof(stop_signals) / sizeof(stop_signals[0])];

// Async-signal-safe: a flag, or (a second signal) the default action.
extern "C" void on_stop_signal(int number) {
  if (received != 0) {
    if (monotonic_seconds() - static_cast<long>(received_at) < duplicate_seconds) return;
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(number, &fallback, nullptr);
    // The handler runs with this signal blocked: unblock it so the re-raised
    // one takes effect now, not after the handler returns.
    sigset_t self;
    sigemptyset(&self);
    sigaddset(&self, number);
    sigprocmask(SIG_UNBLOCK, &self, nullptr);
    raise(number);
    _exit(128 + number);  // a signal whose default action ignores it (none of ours)
  }
  received_at = static_cast<std::sig_atomic_t>(monotonic_seconds());
  received = number;
}

}  // namespace

StopSignals::StopSignals() {
  received = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: MPI, HDF5 and the output streams go on after the handler.
  action.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); ++i)
    sigaction(stop_signals[i], &action, &previous[i]);
}

StopSignals::~StopSignals() {
  for (std::size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); ++i)
    sigaction(stop_signals[i], &previous[i], nullptr);
}

int received_stop_signal() { return static_cast<int>(received); }

const char* stop_signal_name(int number) {
  switch (number) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGXCPU: return "SIGXCPU";
    default: return "signal";
  }
}

int stop_agreed(MPI_Comm comm, double seconds, double& max_seconds) {
  double values[2] = {static_cast<double>(received_stop_signal()), seconds};
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values, 2, MPI_DOUBLE, MPI_MAX, comm));
  max_seconds = values[1];
  return static_cast<int>(values[0]);
}

void test_stop_delay() {
  static const char* const delay = std::getenv("ISOSTENCIL_TEST_STOP_DELAY");
  if (delay == nullptr || *delay == '\0') return;
  std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(delay)));
}

}  // namespace isostencil::driver
