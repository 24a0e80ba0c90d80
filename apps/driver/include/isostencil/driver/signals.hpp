// Stopping `isostencil run` cleanly on a signal (a batch system's time
// limit, scancel, Ctrl-C). The handler only records the signal; the time
// loop (drive() in run.hpp) asks every rank at step boundaries whether one
// arrived (stop_agreed), so all ranks stop at the same step, write a
// checkpoint there and exit with stopped_exit_code. A second signal 3 s or
// more after the first ends the process at once, with the signal's default
// action (sooner it is taken for the same request delivered twice, as Slurm
// and mpirun both do).
#pragma once

#include <mpi.h>

namespace isostencil::driver {

/// Exit code of a run stopped by a signal (0: validates, 1: does not
/// validate, 2: bad input).
inline constexpr int stopped_exit_code = 3;

/// Installs the handler for SIGTERM, SIGINT, SIGUSR1, SIGUSR2 and SIGXCPU
/// for its lifetime (`run` only) and restores the previous dispositions on
/// destruction. Not copyable.
class StopSignals {
public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
};

/// The first stop signal this process received, 0 if none (not collective).
int received_stop_signal();

/// "SIGTERM", "SIGUSR1", ... ("signal N" for others).
const char* stop_signal_name(int number);

/// Collective over comm: the largest signal number any rank received (0: no
/// rank did), so every rank makes the same decision. `seconds` is this rank's
/// wall time of its last chunk of steps; `max_seconds` returns the maximum
/// over the ranks (one reduction carries both).
int stop_agreed(MPI_Comm comm, double seconds, double& max_seconds);

/// Testing aid: with ISOSTENCIL_TEST_STOP_DELAY=SECONDS in the environment,
/// sleeps that long once the ranks agreed to stop, before the checkpoint
/// (a slow stop, so a test can send a second signal in time).
void test_stop_delay();

}  // namespace isostencil::driver
