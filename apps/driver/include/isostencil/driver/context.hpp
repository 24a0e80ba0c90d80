// The MPI world a driver command runs in.
#pragma once

namespace isostencil::driver {

struct MpiContext {
  int rank = 0;
  int size = 1;
};

}  // namespace isostencil::driver
