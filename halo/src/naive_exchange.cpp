// The reference halo exchange (iso::naive_exchange), kept apart from the
// pattern and its collective so that validation checks them independently:
// it finds the owner of every ghost cell by global index from extents it
// gathers itself (docs/design/halo-exchange.md#validation-against-the-naive-exchange).
#include "iso/error.hpp"
#include "iso/halo_exchange.hpp"

#include <climits>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace iso {

namespace detail {
// halo_exchange.cpp: the element type and the fields bound.
std::string check_binding(MPI_Datatype element, const std::vector<void*>& fields);
}  // namespace detail

void naive_exchange(const HaloPattern& pattern, MPI_Datatype element, const std::vector<void*>& fields) {
  const std::string error = detail::check_binding(element, fields);
  if (!error.empty()) throw Error("iso::naive_exchange: " + error);
  int element_size = 0, size = 0;
  ISO_MPI_CHECK(MPI_Type_size(element, &element_size));
  const MPI_Comm comm = pattern.naive_comm();
  ISO_MPI_CHECK(MPI_Comm_size(comm, &size));
  const int d = pattern.dims();
  const ArrayLayout layout = pattern.layout(element);
  const std::vector<int> extent = layout.extent();

  // Where every subdomain lies, gathered here (not taken from the pattern):
  // extents and first global index per dimension and process coordinate.
  std::vector<int> process_dims(d), periods(d), coords(d);
  ISO_MPI_CHECK(MPI_Cart_get(pattern.neighborhood().comm(), d, process_dims.data(), periods.data(), coords.data()));
  std::vector<int> mine(coords);
  mine.insert(mine.end(), layout.interior.begin(), layout.interior.end());
  std::vector<int> all(static_cast<std::size_t>(size) * 2 * d);
  ISO_MPI_CHECK(MPI_Allgather(mine.data(), 2 * d, MPI_INT, all.data(), 2 * d, MPI_INT, comm));
  std::vector<std::vector<long>> first(d), cells(d);
  std::vector<long> total(d, 0);
  for (int j = 0; j < d; ++j) cells[j].assign(process_dims[j], 0);
  for (int r = 0; r < size; ++r)
    for (int j = 0; j < d; ++j)
      cells[j][all[static_cast<std::size_t>(r) * 2 * d + j]] = all[static_cast<std::size_t>(r) * 2 * d + d + j];
  for (int j = 0; j < d; ++j) {
    first[j].assign(process_dims[j], 0);
    for (int c = 0; c < process_dims[j]; ++c) {
      first[j][c] = total[j];
      total[j] += cells[j][c];
    }
  }
  std::set<std::vector<int>> listed;
  for (int i = 0; i < pattern.directions().size(); ++i)
    listed.insert(std::vector<int>(pattern.directions()[i], pattern.directions()[i] + d));

  // Each ghost cell: its global index, the process that owns it (periodic
  // images counted, so the direction says how many processes away), and
  // whether the pattern exchanges that direction at all.
  std::vector<std::vector<long>> wanted(size), placed(size);
  std::map<std::vector<int>, int> ranks;
  std::vector<int> index(d, 0), owner(d), direction(d);
  long cell = 0;
  while (true) {
    bool ghost = false, inside = true;
    long remote = 0;
    for (int j = 0; j < d && inside; ++j) {
      const int lo = layout.ghost_lo[j];
      ghost = ghost || index[j] < lo || index[j] >= lo + layout.interior[j];
      const long global = first[j][coords[j]] + index[j] - lo;
      if (!periods[j] && (global < 0 || global >= total[j])) inside = false;
      const long image = global >= 0 ? global / total[j] : -((-global + total[j] - 1) / total[j]);
      const long wrapped = global - image * total[j];
      int c = 0;
      while (wrapped >= first[j][c] + cells[j][c]) ++c;
      owner[j] = c;
      direction[j] = static_cast<int>(c + image * process_dims[j] - coords[j]);
      remote = remote * (lo + cells[j][c] + layout.ghost_hi[j]) + (wrapped - first[j][c] + lo);
    }
    if (ghost && inside && listed.count(direction)) {
      auto found = ranks.find(owner);
      if (found == ranks.end()) {
        int rank = MPI_PROC_NULL;
        ISO_MPI_CHECK(MPI_Cart_rank(pattern.neighborhood().comm(), owner.data(), &rank));
        found = ranks.emplace(owner, rank).first;
      }
      wanted[found->second].push_back(remote);
      placed[found->second].push_back(cell);
    }
    ++cell;
    int j = d - 1;
    while (j >= 0 && ++index[j] == extent[j]) index[j--] = 0;
    if (j < 0) break;
  }

  // Ask each owner for its cells by local index; it answers with their bytes.
  const long cell_bytes = static_cast<long>(element_size) * static_cast<long>(fields.size());
  std::vector<int> ask_counts(size), asked_counts(size), ask_displs(size), asked_displs(size);
  std::vector<long> asks;
  for (int r = 0; r < size; ++r) {
    ask_counts[r] = static_cast<int>(wanted[r].size());
    ask_displs[r] = static_cast<int>(asks.size());
    asks.insert(asks.end(), wanted[r].begin(), wanted[r].end());
  }
  ISO_MPI_CHECK(MPI_Alltoall(ask_counts.data(), 1, MPI_INT, asked_counts.data(), 1, MPI_INT, comm));
  long total_asked = 0;
  for (int r = 0; r < size; ++r) {
    asked_displs[r] = static_cast<int>(total_asked);
    total_asked += asked_counts[r];
  }
  if (static_cast<long>(asks.size()) * cell_bytes > INT_MAX || total_asked * cell_bytes > INT_MAX)
    throw Error("iso::naive_exchange: more than 2 GiB of ghost cells on one process");
  std::vector<long> asked(static_cast<std::size_t>(total_asked));
  ISO_MPI_CHECK(MPI_Alltoallv(asks.data(), ask_counts.data(), ask_displs.data(), MPI_LONG, asked.data(),
                              asked_counts.data(), asked_displs.data(), MPI_LONG, comm));
  std::vector<char> answers(static_cast<std::size_t>(total_asked * cell_bytes));
  for (long t = 0; t < total_asked; ++t)
    for (std::size_t f = 0; f < fields.size(); ++f)
      std::memcpy(answers.data() + t * cell_bytes + static_cast<long>(f) * element_size,
                  static_cast<const char*>(fields[f]) + asked[static_cast<std::size_t>(t)] * element_size,
                  static_cast<std::size_t>(element_size));
  std::vector<int> answer_counts(size), answer_displs(size), got_counts(size), got_displs(size);
  for (int r = 0; r < size; ++r) {
    answer_counts[r] = static_cast<int>(asked_counts[r] * cell_bytes);
    answer_displs[r] = static_cast<int>(asked_displs[r] * cell_bytes);
    got_counts[r] = static_cast<int>(ask_counts[r] * cell_bytes);
    got_displs[r] = static_cast<int>(ask_displs[r] * cell_bytes);
  }
  std::vector<char> got(asks.size() * static_cast<std::size_t>(cell_bytes));
  ISO_MPI_CHECK(MPI_Alltoallv(answers.data(), answer_counts.data(), answer_displs.data(), MPI_BYTE, got.data(),
                              got_counts.data(), got_displs.data(), MPI_BYTE, comm));
  for (int r = 0; r < size; ++r)
    for (std::size_t t = 0; t < placed[r].size(); ++t)
      for (std::size_t f = 0; f < fields.size(); ++f)
        std::memcpy(static_cast<char*>(fields[f]) + placed[r][t] * element_size,
                    got.data() + (ask_displs[r] + static_cast<long>(t)) * cell_bytes +
                        static_cast<long>(f) * element_size,
                    static_cast<std::size_t>(element_size));
}

}  // namespace iso
