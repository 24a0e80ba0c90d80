// The persistent collectives' entry points: argument checks (the same error
// on every rank), block descriptions from the caller's buffers, the choice
// of Algorithm::automatic, then the native or the scheduled operation.
// The rest lives by concern (operation_internal.hpp lists the files).
#include "operation_internal.hpp"
#include "smpi_compat.hpp"

#include "iso/collectives.hpp"
#include "iso/cost_model.hpp"
#include "iso/error.hpp"
#include "iso/tune_cache.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace iso {

namespace {

using detail::address_of;
using detail::block_bytes;
using detail::BlockDesc;
using detail::Buffers;
using detail::build_native;
using detail::build_scheduled;
using detail::type_info;
using detail::TypeInfo;


using detail::bytes_of;
using detail::Choice;

// The key of auto's kept choice (Neighborhood::kept_choice): what the
// choice depends on besides the neighborhood and the process's cost model,
// which never changes once read (CostModel::for_comm).
std::uint64_t choice_key(Collective collective, const BlockBytes& bytes, int ports) {
  const std::uint64_t key = mix_fingerprint(block_bytes_digest(bytes), static_cast<std::uint64_t>(collective));
  return mix_fingerprint(key, static_cast<std::uint64_t>(ports));
}

// What init agrees on to reuse a kept choice: its key and the choice, so
// that ranks holding different entries all choose again.
std::uint64_t kept_fingerprint(std::uint64_t key, const Neighborhood::KeptChoice& kept) {
  return mix_fingerprint(mix_fingerprint(key, static_cast<std::uint64_t>(kept.algorithm)),
                         static_cast<std::uint64_t>(kept.ports));
}

// Algorithm::automatic: the library's rule (cheapest_choice) on this
// operation's predictions at every port count it considers, the same on
// every rank (predictions are maxed over ranks; mesh schedules differ).
// Kept on the neighborhood where every rank had the same key.
// `bytes` are the buffers' block sizes, `key` their choice_key (an init
// has both from looking for a kept choice).
// `model_only`: the model's own choice, neither the tune cache's nor kept.
Choice choose_algorithm(const Neighborhood& neighborhood, Collective collective, const BlockBytes& bytes,
                        std::uint64_t key, int ports, bool model_only = false) {
  const CostModel& model = CostModel::for_comm(neighborhood.comm());
  const std::vector<Algorithm>& candidates = automatic_candidates();
  const std::vector<int> port_counts = candidate_port_counts(ports);
  // [candidate][port count] (mpi: its one prediction at every port count),
  // then 1 where mpi is no candidate here.
  std::vector<double> predicted;
  for (Algorithm algorithm : candidates)
    for (int p : port_counts)
      predicted.push_back(algorithm == Algorithm::mpi
                              ? predict_native_seconds(model, neighborhood.size(), bytes)
                              : predict_execution_seconds(model, neighborhood.schedule(algorithm, collective), bytes,
                                                          neighborhood.rank(), p));
  // The key's four 16-bit parts and their negations (exact in doubles):
  // their maxima tell whether every rank had the same key.
  for (int part = 0; part < 4; ++part) {
    const auto bits = static_cast<double>((key >> (16 * part)) & 0xffffu);
    predicted.push_back(bits);
    predicted.push_back(-bits);
  }
  // Rank 0's tune cache, where one exists: it rides in the allreduce, so
  // that a job without one pays nothing more.
  const std::string cache = neighborhood.rank() == 0 && !model_only ? detail::existing_tune_cache() : std::string();
  predicted.push_back(cache.empty() ? 0.0 : 1.0);
  std::vector<int> targets;
  for (int i = 0; i < neighborhood.size(); ++i) targets.push_back(neighborhood.target_rank(i));
  predicted.push_back(!ISO_SMPI && mpi_is_candidate(std::move(targets)) ? 0.0 : 1.0);
  ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, predicted.data(), static_cast<int>(predicted.size()), MPI_DOUBLE,
                              MPI_MAX, neighborhood.comm()));
  const bool mpi_everywhere = predicted.back() == 0.0;
  predicted.pop_back();
  const bool tune_cache_here = predicted.back() == 1.0;
  predicted.pop_back();
  bool same_key = true;
  for (int part = 0; part < 4; ++part) {
    same_key = same_key && predicted[predicted.size() - 2] == -predicted.back();
    predicted.resize(predicted.size() - 2);
  }
  const CheapestChoice best = cheapest_choice(predicted, port_counts, mpi_everywhere);
  Choice choice{best.algorithm, best.algorithm == Algorithm::mpi ? 0 : best.ports, {}};
  // Only where every rank has the same block sizes: the key tune stored its
  // measurement under is then one process's digest.
  if (tune_cache_here && same_key)
    if (std::optional<Choice> measured =
            detail::measured_choice(neighborhood, collective, bytes, ports, port_counts, mpi_everywhere, choice,
                                    cache))
      choice = std::move(*measured);
  if (same_key && !model_only) neighborhood.keep_choice(key, {choice.algorithm, choice.ports, choice.measured});
  return choice;
}

// Local argument checks common to every collective; empty when fine.
std::string check_blocks(const std::vector<BlockDesc>& blocks, const char* side) {
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const BlockDesc& block = blocks[i];
    auto name = [&] { return std::string(side) + " block " + std::to_string(i); };
    if (block.count < 0) return name() + ": count is negative (" + std::to_string(block.count) + ")";
    if (block.type == MPI_DATATYPE_NULL) return name() + ": datatype is MPI_DATATYPE_NULL";
  }
  return {};
}

std::string check_buffer(const void* buffer, const std::vector<BlockDesc>& blocks, const char* name) {
  if (buffer == MPI_IN_PLACE) return std::string(name) + " is MPI_IN_PLACE, which is not supported";
  if (buffer != nullptr) return {};
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (block_bytes(blocks[i]) > 0)
      return std::string(name) + " is null but block " + std::to_string(i) + " has " +
             std::to_string(block_bytes(blocks[i])) + " bytes";
  return {};
}

// Reports, on every rank, a send block whose size differs from the receive
// block it pairs with at the target (straightforward exchange of the sizes).
void verify_block_sizes(const Neighborhood& neighborhood, const Buffers& buffers, const char* where) {
  const int s = neighborhood.size();
  std::vector<long> mine(2 * static_cast<std::size_t>(s)), theirs(2 * static_cast<std::size_t>(s), -1);
  for (int i = 0; i < s; ++i) {
    mine[2 * i] = block_bytes(buffers.send[i]);
    mine[2 * i + 1] = block_bytes(buffers.recv[i]);
  }
  Operation exchange = alltoall_init(neighborhood, mine.data(), 2, MPI_LONG, theirs.data(), 2, MPI_LONG,
                                     OperationOptions{Algorithm::linear, false});
  exchange.run();
  std::string error;
  for (int i = 0; i < s && error.empty(); ++i) {
    if (neighborhood.source_rank(i) < 0) continue;
    if (theirs[2 * i] != mine[2 * i + 1])
      error = "block " + std::to_string(i) + ": rank " +
              std::to_string(neighborhood.source_rank(i)) + " sends " + std::to_string(theirs[2 * i]) +
              " bytes but this rank receives " + std::to_string(mine[2 * i + 1]);
    else if (theirs[2 * i + 1] != mine[2 * i + 1])
      error = "block " + std::to_string(i) + ": receive size " + std::to_string(mine[2 * i + 1]) +
              " differs from " + std::to_string(theirs[2 * i + 1]) + " at rank " +
              std::to_string(neighborhood.source_rank(i)) +
              " (block sizes may differ only along dimensions where the offset is zero)";
  }
  agree_on_errors(neighborhood.comm(), where, error);
}

}  // namespace

namespace detail {

Choice model_choice(const Neighborhood& neighborhood, Collective collective, const Buffers& buffers, int ports) {
  BlockBytes bytes = bytes_of(buffers);
  const std::uint64_t key = choice_key(collective, bytes, ports);
  return choose_algorithm(neighborhood, collective, bytes, key, ports, true);
}

// Everything of an init up to its agreement: local checks, the options'
// fingerprint, auto's kept choice (choose_algorithm).
PreparedInit prepare_init(const char* where, Collective collective, const Neighborhood& neighborhood,
                          const void* sendbuf, void* recvbuf, Buffers buffers, std::string error,
                          const OperationOptions& options, bool irregular, bool absolute_addresses) {
  if (error.empty() && options.ports < 0)
    error = "ports is " + std::to_string(options.ports) + "; give 0 (no limit) or a positive count";
  const int posting = static_cast<int>(options.posting);
  if (error.empty() && (posting < static_cast<int>(Posting::automatic) || posting > static_cast<int>(Posting::fresh)))
    error = "posting is " + std::to_string(posting) + "; give Posting::automatic, persistent or fresh";
  if (error.empty()) error = check_blocks(buffers.send, "send");
  if (error.empty()) error = check_blocks(buffers.recv, "receive");
  // alltoallw may address blocks absolutely from MPI_BOTTOM (a null pointer).
  if (error.empty() && !absolute_addresses) error = check_buffer(sendbuf, buffers.send, "sendbuf");
  if (error.empty() && !absolute_addresses) error = check_buffer(recvbuf, buffers.recv, "recvbuf");
  if (error.empty() && !irregular && !buffers.send.empty() && !buffers.recv.empty() &&
      block_bytes(buffers.send[0]) != block_bytes(buffers.recv[0]))
    error = "a send block has " + std::to_string(block_bytes(buffers.send[0])) + " bytes but a receive block has " +
            std::to_string(block_bytes(buffers.recv[0])) + " (type signatures must match)";
  PreparedInit prepared;
  prepared.where = where;
  prepared.collective = collective;
  prepared.neighborhood = &neighborhood;
  prepared.options = options;
  prepared.irregular = irregular;
  // Options that differ between ranks would build different schedules and
  // hang; they are agreed with the argument errors, in the same allreduce pass.
  std::uint64_t fingerprint = mix_fingerprint(0, static_cast<std::uint64_t>(options.algorithm));
  fingerprint = mix_fingerprint(fingerprint, options.verify_signatures ? 1 : 0);
  prepared.options_fingerprint = mix_fingerprint(fingerprint, static_cast<std::uint64_t>(options.ports));
  // So does auto's kept choice (choose_algorithm): it is used only where every
  // rank holds the same one, else every rank chooses again.
  if (error.empty() && options.algorithm == Algorithm::automatic) {
    buffers.materialize(neighborhood.size());
    prepared.choice_bytes = bytes_of(buffers);
    prepared.choice_key = choice_key(collective, prepared.choice_bytes, options.ports);
    if (const Neighborhood::KeptChoice* found = neighborhood.kept_choice(prepared.choice_key)) {
      prepared.kept = *found;
      prepared.kept_print = kept_fingerprint(prepared.choice_key, *found);
    }
  }
  prepared.error = std::move(error);
  prepared.buffers = std::move(buffers);
  return prepared;
}

bool PreparedInit::ready() const {
  // Algorithm::mpi makes a graph communicator, tune times candidates, the
  // verification exchanges sizes: collective calls of their own.
  const Algorithm algorithm = options.algorithm;
  return error.empty() && !(irregular && options.verify_signatures) && algorithm != Algorithm::mpi &&
         algorithm != Algorithm::tune && (algorithm != Algorithm::automatic || kept.has_value());
}

std::uint64_t PreparedInit::ready_fingerprint() const { return mix_fingerprint(options_fingerprint, kept_print); }

Operation finish_init(PreparedInit prepared, bool agreed) {
  const Neighborhood& neighborhood = *prepared.neighborhood;
  const OperationOptions& options = prepared.options;
  Buffers& buffers = prepared.buffers;
  // Agreed by the caller: every rank was ready() with the same
  // ready_fingerprint(), so a kept choice is kept everywhere.
  const bool kept_everywhere =
      agreed ? prepared.kept.has_value()
             : agree_on_errors_and_all(
                   neighborhood.comm(), prepared.where, prepared.error,
                   {MustMatch{prepared.options_fingerprint, "the operation options (algorithm, verify_signatures, ports)"}},
                   prepared.kept.has_value(), prepared.kept_print);
  if (prepared.irregular && options.verify_signatures) verify_block_sizes(neighborhood, buffers, prepared.where);
  // A named algorithm lists the blocks only where its plan is not cached
  // (build_scheduled); choosing one reads them all.
  if (options.algorithm == Algorithm::tune || options.algorithm == Algorithm::automatic ||
      options.algorithm == Algorithm::mpi)
    buffers.materialize(neighborhood.size());
  if (options.algorithm == Algorithm::tune) return tune(neighborhood, prepared.collective, buffers, options);
  Choice choice = options.algorithm != Algorithm::automatic ? Choice{options.algorithm, options.ports, {}}
                  : kept_everywhere ? Choice{prepared.kept->algorithm, prepared.kept->ports, prepared.kept->measured}
                                    : choose_algorithm(neighborhood, prepared.collective, prepared.choice_bytes,
                                                       prepared.choice_key, options.ports);
  std::unique_ptr<Operation::Impl> impl =
      choice.algorithm == Algorithm::mpi
          ? build_native(neighborhood, prepared.collective, buffers)
          : build_scheduled(neighborhood, choice.algorithm, prepared.collective, std::move(buffers), choice.ports,
                            options.posting);
  if (!choice.measured.empty()) {  // auto followed the tune cache
    impl->trials = std::move(choice.measured);
    impl->tune_cached = true;
  }
  return make_operation(std::move(impl));
}

}  // namespace detail

namespace {

Operation init(const char* where, Collective collective, const Neighborhood& neighborhood, const void* sendbuf,
               void* recvbuf, Buffers buffers, std::string error, const OperationOptions& options,
               bool irregular, bool absolute_addresses = false) {
  return detail::finish_init(detail::prepare_init(where, collective, neighborhood, sendbuf, recvbuf,
                                                  std::move(buffers), std::move(error), options, irregular,
                                                  absolute_addresses),
                             false);
}

Operation regular_init(const char* where, Collective collective, const Neighborhood& neighborhood,
                       const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, const OperationOptions& options) {
  const int s = neighborhood.size();
  std::string error;
  if (sendcount < 0) error = "sendcount is negative (" + std::to_string(sendcount) + ")";
  else if (recvcount < 0) error = "recvcount is negative (" + std::to_string(recvcount) + ")";
  else if (sendtype == MPI_DATATYPE_NULL) error = "sendtype is MPI_DATATYPE_NULL";
  else if (recvtype == MPI_DATATYPE_NULL) error = "recvtype is MPI_DATATYPE_NULL";
  Buffers buffers;
  if (error.empty()) {
    const TypeInfo send_info = type_info(sendtype);
    const TypeInfo recv_info = type_info(recvtype);
    const int send_blocks = collective == Collective::alltoall ? s : 1;
    const MPI_Aint send_base = address_of(sendbuf), recv_base = address_of(recvbuf);
    buffers.send_base = send_base, buffers.recv_base = recv_base;
    buffers.regular_layout = {sendcount, detail::handle_word(sendtype), send_info.extent, recvcount,
                              detail::handle_word(recvtype), recv_info.extent, send_blocks, s};
    // The first blocks stand for all (every check reads the same count and
    // type); Buffers::materialize lists the others where they are needed.
    buffers.send_blocks = send_blocks, buffers.recv_blocks = s;
    buffers.send_stride = static_cast<MPI_Aint>(sendcount) * send_info.extent;
    buffers.recv_stride = static_cast<MPI_Aint>(recvcount) * recv_info.extent;
    if (send_blocks > 0) buffers.send.push_back({send_base, sendcount, sendtype});
    if (s > 0) buffers.recv.push_back({recv_base, recvcount, recvtype});
  }
  return init(where, collective, neighborhood, sendbuf, recvbuf, std::move(buffers), error, options, false);
}

}  // namespace

std::string algorithm_label(Algorithm algorithm, int ports) {
  return std::string(to_string(algorithm)) + (ports > 0 ? ":p" + std::to_string(ports) : "");
}

std::string describe_choice(const Operation& operation) {
  const std::string text = algorithm_label(operation.algorithm(), operation.ports());
  const std::vector<TuneTrial>& trials = operation.tune_trials();
  if (trials.empty()) return text;
  double least = trials.front().seconds;
  for (const TuneTrial& t : trials) least = std::min(least, t.seconds);
  char figure[32];
  std::snprintf(figure, sizeof figure, "%.3g", least * 1e6);
  return text + (operation.tune_cached() ? " (tune cache: " : " (tune: ") + figure + " us per call, the fastest of " +
         std::to_string(trials.size()) + " candidates timed " +
         (operation.tune_cached() ? "in an earlier run)" : "at init)");
}

Operation alltoall_init(const Neighborhood& neighborhood, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                        void* recvbuf, int recvcount, MPI_Datatype recvtype, const OperationOptions& options) {
  return regular_init("iso::alltoall_init", Collective::alltoall, neighborhood, sendbuf, sendcount, sendtype,
                      recvbuf, recvcount, recvtype, options);
}

Operation allgather_init(const Neighborhood& neighborhood, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                         void* recvbuf, int recvcount, MPI_Datatype recvtype, const OperationOptions& options) {
  return regular_init("iso::allgather_init", Collective::allgather, neighborhood, sendbuf, sendcount, sendtype,
                      recvbuf, recvcount, recvtype, options);
}

Operation alltoallv_init(const Neighborhood& neighborhood, const void* sendbuf, const int sendcounts[],
                         const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                         const int rdispls[], MPI_Datatype recvtype, const OperationOptions& options) {
  const int s = neighborhood.size();
  std::string error;
  if (s > 0 && (!sendcounts || !sdispls || !recvcounts || !rdispls))
    error = "counts and displacement arrays must not be null";
  else if (sendtype == MPI_DATATYPE_NULL) error = "sendtype is MPI_DATATYPE_NULL";
  else if (recvtype == MPI_DATATYPE_NULL) error = "recvtype is MPI_DATATYPE_NULL";
  Buffers buffers;
  if (error.empty()) {
    const MPI_Aint send_extent = type_info(sendtype).extent;
    const MPI_Aint recv_extent = type_info(recvtype).extent;
    const MPI_Aint send_base = address_of(sendbuf), recv_base = address_of(recvbuf);
    buffers.send_base = send_base, buffers.recv_base = recv_base;
    for (int i = 0; i < s; ++i) {
      buffers.send.push_back({MPI_Aint_add(send_base, static_cast<MPI_Aint>(sdispls[i]) * send_extent), sendcounts[i],
                              sendtype});
      buffers.recv.push_back({MPI_Aint_add(recv_base, static_cast<MPI_Aint>(rdispls[i]) * recv_extent), recvcounts[i],
                              recvtype});
    }
  }
  return init("iso::alltoallv_init", Collective::alltoall, neighborhood, sendbuf, recvbuf, std::move(buffers), error,
              options, true);
}

namespace detail {

// The caller's own argument errors ride in the operation's agreement (a
// halo exchange's binding): one collective call less per set-up.
PreparedInit prepare_alltoallw(const char* where, std::string error, const Neighborhood& neighborhood,
                               const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                               const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                               const OperationOptions& options) {
  const int s = neighborhood.size();
  if (error.empty() && s > 0 && (!sendcounts || !sdispls || !sendtypes || !recvcounts || !rdispls || !recvtypes))
    error = "counts, displacement and datatype arrays must not be null";
  Buffers buffers;
  if (error.empty()) {
    const MPI_Aint send_base = address_of(sendbuf), recv_base = address_of(recvbuf);
    buffers.send_base = send_base, buffers.recv_base = recv_base;
    for (int i = 0; i < s; ++i) {
      buffers.send.push_back({MPI_Aint_add(send_base, sdispls[i]), sendcounts[i], sendtypes[i]});
      buffers.recv.push_back({MPI_Aint_add(recv_base, rdispls[i]), recvcounts[i], recvtypes[i]});
    }
  }
  return prepare_init(where, Collective::alltoall, neighborhood, sendbuf, recvbuf, std::move(buffers),
                      std::move(error), options, true, true);
}

Operation alltoallw_init(const char* where, std::string error, const Neighborhood& neighborhood,
                         const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                         const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], const OperationOptions& options) {
  return finish_init(prepare_alltoallw(where, std::move(error), neighborhood, sendbuf, sendcounts, sdispls, sendtypes,
                                       recvbuf, recvcounts, rdispls, recvtypes, options),
                     false);
}

}  // namespace detail

Operation alltoallw_init(const Neighborhood& neighborhood, const void* sendbuf, const int sendcounts[],
                         const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                         const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                         const OperationOptions& options) {
  return detail::alltoallw_init("iso::alltoallw_init", {}, neighborhood, sendbuf, sendcounts, sdispls, sendtypes,
                                recvbuf, recvcounts, rdispls, recvtypes, options);
}

}  // namespace iso
