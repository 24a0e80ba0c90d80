#include "iso/iso.h"

#include "iso/collectives.hpp"
#include "iso/error.hpp"
#include "smpi_compat.hpp"

#include <memory>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

struct Iso_Request_s {
  iso::Operation operation;
};

namespace {

thread_local std::string last_error;

// The neighborhood lives as an attribute of the isocomm; MPI_Comm_free on the
// isocomm deletes it through this callback.
struct Attached {
  iso::Neighborhood neighborhood;
  iso::Algorithm algorithm;
  int ports = 0;
  iso::OperationOptions options() const {
    iso::OperationOptions out;
    out.algorithm = algorithm;
    out.ports = ports;
    return out;
  }
};

int delete_attached(MPI_Comm, int, void* value, void*) {
  delete static_cast<Attached*>(value);
  return MPI_SUCCESS;
}

int keyval() {
  static int key = MPI_KEYVAL_INVALID;
  if (key == MPI_KEYVAL_INVALID)
    ISO_MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attached, &key, nullptr));
  return key;
}

template <class Body>
int guarded(Body&& body) {
  try {
    body();
    last_error.clear();
    return MPI_SUCCESS;
  } catch (const iso::Error& error) {
    last_error = error.what();
    return error.mpi_code();
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return MPI_ERR_NO_MEM;
  } catch (const std::exception& error) {
    last_error = error.what();
    return MPI_ERR_OTHER;
  }
}

Attached& attached(MPI_Comm isocomm, const char* where) {
  if (isocomm == MPI_COMM_NULL) throw iso::Error(std::string(where) + ": isocomm is MPI_COMM_NULL", MPI_ERR_COMM);
  void* value = nullptr;
  int found = 0;
  ISO_MPI_CHECK(MPI_Comm_get_attr(isocomm, keyval(), &value, &found));
  if (!found)
    throw iso::Error(std::string(where) + ": the communicator has no isomorphic neighborhood "
                     "(create it with Iso_neighborhood_create)", MPI_ERR_COMM);
  return *static_cast<Attached*>(value);
}

std::string info_value(MPI_Info info, const char* key) {
  if (info == MPI_INFO_NULL) return {};
  char value[MPI_MAX_INFO_VAL + 1] = {};
  int found = 0;
  ISO_MPI_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &found));
  return found ? std::string(value) : std::string();
}

// A null request on one rank only must not leave the others waiting in the
// first Iso_Wait: agreed before the collective init.
void agree_on_request(const Attached& a, const Iso_Request* request, const char* where) {
  iso::agree_on_errors(a.neighborhood.comm(), where, request ? "" : "request is null");
}

void store(Iso_Request* request, iso::Operation operation, const char* where) {
  if (!request) throw iso::Error(std::string(where) + ": request is null", MPI_ERR_REQUEST);
  *request = new Iso_Request_s{std::move(operation)};
}

// The one path of every Iso_neighbor_*_init: the isocomm's neighborhood, the
// request agreed on all ranks, then init(neighborhood, options) stored in it.
template <class Init>
int persistent_init(const char* where, MPI_Comm isocomm, Iso_Request* request, Init&& init) {
  return guarded([&] {
    Attached& a = attached(isocomm, where);
    agree_on_request(a, request, where);
    store(request, init(a.neighborhood, a.options()), where);
  });
}

iso::Operation& operation(Iso_Request* request, const char* where) {
  if (!request || !*request)
    throw iso::Error(std::string(where) + ": request is null or ISO_REQUEST_NULL", MPI_ERR_REQUEST);
  return (*request)->operation;
}

}  // namespace

extern "C" {

int Iso_neighborhood_create(MPI_Comm cartcomm, int s, const int relative_coordinates[], MPI_Comm* isocomm) {
  return Iso_neighborhood_create_info(cartcomm, s, relative_coordinates, MPI_INFO_NULL, isocomm);
}

int Iso_neighborhood_create_info(MPI_Comm cartcomm, int s, const int relative_coordinates[], MPI_Info info,
                                 MPI_Comm* isocomm) {
  return guarded([&] {
    const char* where = "Iso_neighborhood_create";
    // Without a communicator there is nobody to agree with.
    if (cartcomm == MPI_COMM_NULL) throw iso::Error(std::string(where) + ": cartcomm is MPI_COMM_NULL", MPI_ERR_COMM);
    int topology = MPI_UNDEFINED, d = 0;
    topology = iso::detail::topology_of(cartcomm);
    if (topology == MPI_CART) ISO_MPI_CHECK(MPI_Cartdim_get(cartcomm, &d));
    // Every argument error, on any rank, is agreed over all ranks before the
    // first collective, so no rank is left waiting in one.
    std::string error;
    if (!isocomm) error = "isocomm is null";
    const bool bad_count = s < 0 || (s > 0 && !relative_coordinates);
    if (error.empty() && bad_count) error = "s is negative or relative_coordinates is null";
    std::vector<int> coords;
    if (!bad_count && d > 0) coords.assign(relative_coordinates, relative_coordinates + static_cast<long>(s) * d);
    iso::NeighborhoodOptions options;
    const std::string verify = info_value(info, "iso_verify");
    if (verify == "false" || verify == "0") options.verify = false;
    else if (error.empty() && !verify.empty() && verify != "true" && verify != "1")
      error = "info iso_verify=\"" + verify + "\" is not true, false, 1 or 0";
    const std::string algorithm_name = info_value(info, "iso_algorithm");
    iso::Algorithm algorithm = iso::Algorithm::torus;
    if (!algorithm_name.empty()) {
      try {
        algorithm = iso::parse_algorithm(algorithm_name);
      } catch (const iso::Error& bad) {
        if (error.empty()) error = std::string("info iso_algorithm: ") + bad.what();
      }
    }
    int ports = 0;
    const std::string ports_text = info_value(info, "iso_ports");
    if (!ports_text.empty()) {
      char* end = nullptr;
      errno = 0;
      const long value = std::strtol(ports_text.c_str(), &end, 10);
      if (errno != 0 || end == ports_text.c_str() || *end != '\0' || value < 0 || value > 1000000) {
        if (error.empty()) error = "info iso_ports=\"" + ports_text + "\" is not a count (0: no limit, or 1 to 1000000)";
      } else {
        ports = static_cast<int>(value);
      }
    }
    std::uint64_t fingerprint = iso::mix_fingerprint(0, static_cast<std::uint64_t>(algorithm));
    fingerprint = iso::mix_fingerprint(fingerprint, options.verify ? 1 : 0);
    fingerprint = iso::mix_fingerprint(fingerprint, static_cast<std::uint64_t>(ports));
    iso::agree_on_errors(cartcomm, where, error, fingerprint, "the info values iso_algorithm, iso_verify and iso_ports");
    auto holder = std::make_unique<Attached>(
        Attached{iso::Neighborhood(cartcomm, iso::OffsetList(std::max(d, 1), std::move(coords)), options),
                 algorithm, ports});
    MPI_Comm dup = MPI_COMM_NULL;
    ISO_MPI_CHECK(MPI_Comm_dup(cartcomm, &dup));
    ISO_MPI_CHECK(MPI_Comm_set_attr(dup, keyval(), holder.release()));
    *isocomm = dup;
  });
}

int Iso_neighborhood_free(MPI_Comm* isocomm) {
  return guarded([&] {
    if (!isocomm) throw iso::Error("Iso_neighborhood_free: isocomm is null");
    attached(*isocomm, "Iso_neighborhood_free");
    ISO_MPI_CHECK(MPI_Comm_free(isocomm));
  });
}

int Iso_neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm isocomm, Iso_Request* request) {
  return persistent_init("Iso_neighbor_alltoall_init", isocomm, request, [&](auto& nbh, auto options) {
    return iso::alltoall_init(nbh, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, options);
  });
}

int Iso_neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype, MPI_Comm isocomm, Iso_Request* request) {
  return persistent_init("Iso_neighbor_allgather_init", isocomm, request, [&](auto& nbh, auto options) {
    return iso::allgather_init(nbh, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, options);
  });
}

int Iso_neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int senddispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int recvdispls[],
                                MPI_Datatype recvtype, MPI_Comm isocomm, Iso_Request* request) {
  return persistent_init("Iso_neighbor_alltoallv_init", isocomm, request, [&](auto& nbh, auto options) {
    return iso::alltoallv_init(nbh, sendbuf, sendcounts, senddispls, sendtype, recvbuf, recvcounts, recvdispls,
                               recvtype, options);
  });
}

int Iso_neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[], const MPI_Aint senddispls[],
                                const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                const MPI_Aint recvdispls[], const MPI_Datatype recvtypes[], MPI_Comm isocomm,
                                Iso_Request* request) {
  return persistent_init("Iso_neighbor_alltoallw_init", isocomm, request, [&](auto& nbh, auto options) {
    return iso::alltoallw_init(nbh, sendbuf, sendcounts, senddispls, sendtypes, recvbuf, recvcounts, recvdispls,
                               recvtypes, options);
  });
}

int Iso_Start(Iso_Request* request) {
  return guarded([&] { operation(request, "Iso_Start").start(); });
}

int Iso_Test(Iso_Request* request, int* flag) {
  return guarded([&] {
    if (!flag) throw iso::Error("Iso_Test: flag is null");
    *flag = operation(request, "Iso_Test").test() ? 1 : 0;
  });
}

int Iso_Wait(Iso_Request* request) {
  return guarded([&] { operation(request, "Iso_Wait").wait(); });
}

int Iso_Request_free(Iso_Request* request) {
  return guarded([&] {
    iso::Operation& op = operation(request, "Iso_Request_free");
    if (op.active()) throw iso::Error("Iso_Request_free: the operation is active; call Iso_Wait first", MPI_ERR_REQUEST);
    delete *request;
    *request = ISO_REQUEST_NULL;
  });
}

const char* Iso_Error_message(void) { return last_error.c_str(); }

}  // extern "C"
