#include "iso/error.hpp"

#include <string>

namespace iso::detail {

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  int rank = -1;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) text[0] = '\0';
  int error_class = MPI_ERR_OTHER;
  MPI_Error_class(code, &error_class);
  throw Error("rank " + std::to_string(rank) + ": " + call + " failed at " + file + ":" +
                  std::to_string(line) + ": " + text,
              error_class);
}

}  // namespace iso::detail
