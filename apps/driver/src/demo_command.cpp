// `isostencil demo`: the built-in default job until the stencil apps exist.
// Runs every algorithm of the isomorphic alltoall and allgather (linear, torus,
// direct, mpi and auto) on MPI_COMM_WORLD for one or more block sizes,
// verifies every received block against the value its source rank sent and
// against MPI's own neighborhood collectives on a distributed graph
// communicator with the same neighbors, and prints the cost model's predicted
// time next to the measured one. auto's pick is checked against `plan
// --predict`'s rule (isostencil::predict) under the same model.
#include "command.hpp"

#include "isostencil/plan.hpp"
#include "isostencil/spec.hpp"

#include "iso/collectives.hpp"
#include "iso/error.hpp"
#include "iso/neighborhood.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <unistd.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace isostencil::cli {

namespace {

// Byte b of block `block` as sent by `origin`; `seed` changes the data
// between runs so that a stale receive buffer cannot pass.
unsigned char pattern(std::uint32_t seed, int origin, int block, std::size_t byte) {
  std::uint32_t x = seed * 0x9E3779B1u ^ static_cast<std::uint32_t>(origin) * 0x85EBCA77u ^
                    static_cast<std::uint32_t>(block) * 0xC2B2AE3Du ^
                    static_cast<std::uint32_t>(byte) * 0x27D4EB2Fu;
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  x ^= x >> 12;
  return static_cast<unsigned char>(x);
}

// Receive blocks from missing neighbors (non-periodic dimensions) must keep
// this value: the collectives leave them untouched.
unsigned char sentinel(std::uint32_t seed) {
  return static_cast<unsigned char>(0xA5 ^ seed);
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// `text` of rank 0 on every rank.
std::string broadcast_string(std::string text, MPI_Comm comm) {
  int length = static_cast<int>(text.size());
  ISO_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, 0, comm));
  text.resize(static_cast<std::size_t>(length));
  ISO_MPI_CHECK(MPI_Bcast(text.data(), length, MPI_CHAR, 0, comm));
  return text;
}

// An error found on rank 0 only, as the same UsageError on every rank.
void agree_usage_error(const std::string& rank0_error, MPI_Comm comm) {
  const std::string error = broadcast_string(rank0_error, comm);
  if (!error.empty()) throw UsageError(error);
}

bool same_figures(const iso::CostModel& a, const iso::CostModel& b) {
  return a.alpha == b.alpha && a.beta == b.beta && a.gamma == b.gamma && a.delta == b.delta;
}

class DemoCommand final : public Command {
public:
  explicit DemoCommand(CLI::App& parent) {
    app_ = parent.add_subcommand(
        "demo",
        "Run and verify every algorithm of the isomorphic alltoall and allgather on "
        "MPI_COMM_WORLD, and time them against MPI_Neighbor_alltoall/allgather");
    app_->footer(
        "Examples:\n"
        "  mpirun -np 2 isostencil demo\n"
        "  mpirun -np 4 isostencil demo --moore 2:2 --mesh --iterations 50 --bytes 4096\n"
        "  mpirun -np 2 isostencil demo --moore 3:1 --bytes 8,512,8192 --model calibrate");
    add_neighborhood_options(*app_, args_,
                             "Moore neighborhood of dimension D and radius R (default 3:1)",
                             "processes per dimension, product = number of ranks "
                             "(default: MPI_Dims_create)");
    app_->add_option("--iterations,-n", iterations_, "timed calls of each operation (default 100)")
        ->check(CLI::Range(1, 100000000))
        ->group("Run");
    app_->add_option("--bytes,-b", bytes_,
                     "bytes per block, one size or a list run one after the other, e.g. "
                     "8,512,8192 (default 1024)")
        ->type_name("B[,B...]")
        ->group("Run");
    app_->add_option("--warmup", warmup_, "untimed calls before timing (default 2)")
        ->check(CLI::Range(0, 1000000))
        ->group("Run");
    add_model_options(*app_, model_args_,
                      "as auto itself (CostModel::for_comm): ISO_COST_MODEL (a file or "
                      "defaults), else the cached calibration "
                      "(~/.cache/isostencil/cost_model-<machine>.txt, one per MPI library, transport and host count), else a calibration written there");
  }

  int run(const MpiContext& mpi) override {
    // All validation happens before any communication and gives the same
    // verdict on every rank (UsageError -> exit code 2 everywhere).
    const ResolvedOffsets resolved = resolve_offsets(args_, "3:1");
    const iso::OffsetList& offsets = resolved.offsets;
    const int dims = offsets.dims();
    const int s = offsets.size();
    std::vector<int> procs(static_cast<std::size_t>(dims), 0);
    if (!args_.procs.empty()) {
      procs = parse_procs(args_.procs, dims);
      long long product = 1;
      for (int p : procs)
        product *= p;
      if (product != mpi.size)
        throw UsageError("--procs " + args_.procs + ": " + format_sizes(procs) + " = " +
                         std::to_string(product) + " processes, but " + std::to_string(mpi.size) +
                         " ranks run");
    } else {
      ISO_MPI_CHECK(MPI_Dims_create(mpi.size, dims, procs.data()));
    }
    const std::vector<bool> periodic = resolve_periodic(args_, dims);
    const std::vector<long> sizes = parse_bytes_list(bytes_);
    const std::size_t max_bytes =
        static_cast<std::size_t>(*std::max_element(sizes.begin(), sizes.end()));
    const std::size_t max_buffer = std::size_t{256} << 20;
    if (static_cast<long double>(s) * max_bytes > static_cast<long double>(max_buffer))
      throw UsageError(
          fmt::format("{} blocks x {} bytes is more than the 256 MiB per buffer the "
                      "demo allows; use fewer --bytes",
                      s, max_bytes));
    {
      iso::CartGeometry grid{procs, periodic};
      check_limits(offsets, grid);
    }
    std::string model_note;
    const iso::CostModel model = resolve_model(mpi, model_note);

    iso::CartComm cart(MPI_COMM_WORLD, procs, periodic);
    iso::Neighborhood nbh(cart.get(), offsets, iso::NeighborhoodOptions{true});
    const int rank = nbh.rank();

    // What `plan --predict` says for this grid: figures, predicted times and
    // auto's choice (max over processes, without communication).
    const Predictions predictions = predict(offsets, nbh.geometry(), model, sizes);

    if (mpi.rank == 0) {
      std::string size_list;
      for (std::size_t k = 0; k < sizes.size(); ++k)
        size_list += (k ? (k + 1 == sizes.size() ? " and " : ", ") : "") + std::to_string(sizes[k]);
      std::cout << fmt::format(
          "isostencil demo: {} ranks, {} blocks of {} bytes, {} timed calls "
          "per operation\n\n",
          mpi.size, s, size_list, iterations_);
      std::cout << format_plan_text(compute_plan(resolved.description, offsets, nbh.geometry()))
                << "\n";
      std::cout << format_model_text(model, model_note) << "\n";
      std::cout.flush();
    }

    // The same neighbors as a distributed graph, for MPI's own collectives
    // (on the Cartesian communicator: the neighborhood's own is private).
    // Missing neighbors (non-periodic dimensions) are left out; the blocks
    // are compacted accordingly.
    std::vector<int> target_blocks;
    std::vector<int> source_blocks;
    std::vector<int> targets;
    std::vector<int> sources;
    for (int i = 0; i < s; ++i) {
      if (nbh.target_rank(i) >= 0) {
        target_blocks.push_back(i);
        targets.push_back(nbh.target_rank(i));
      }
      if (nbh.source_rank(i) >= 0) {
        source_blocks.push_back(i);
        sources.push_back(nbh.source_rank(i));
      }
    }
    MPI_Comm graph_raw = MPI_COMM_NULL;
    ISO_MPI_CHECK(MPI_Dist_graph_create_adjacent(cart.get(), static_cast<int>(sources.size()),
                                                 sources.data(), MPI_UNWEIGHTED,
                                                 static_cast<int>(targets.size()), targets.data(),
                                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph_raw));
    iso::Comm graph(graph_raw);
    // The MPI library's own collectives where some rank has a neighbor in
    // several directions: trusted only if the library pairs repeated edges in
    // order (probed on two self-edges; MPICH 4.0.2 reverses them,
    // docs/mpich.md). Otherwise MPI_Neighbor_* is left out (the mpi algorithm
    // merges repeated partners into one edge and is still checked).
    int repeated = nbh.has_repeated_partner() ? 1 : 0;
    ISO_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &repeated, 1, MPI_INT, MPI_MAX, cart.get()));
    const bool mpi_untrusted = repeated && !iso::mpi_pairs_repeated_edges_in_order();
    if (mpi_untrusted && mpi.rank == 0)
      std::cout << "MPI_Neighbor_* left out as a reference: repeated partners, and this MPI library "
                   "pairs repeated edges out of order\n";

    const std::size_t block_count = static_cast<std::size_t>(std::max(s, 1));
    std::vector<unsigned char> send(block_count * max_bytes);
    std::vector<unsigned char> recv(block_count * max_bytes);
    std::vector<unsigned char> expected(block_count * max_bytes);
    std::vector<unsigned char> reference(block_count * max_bytes);  // MPI's result, uncompacted
    std::vector<unsigned char> compact_send(block_count * max_bytes);
    std::vector<unsigned char> compact_recv(block_count * max_bytes);
    std::vector<double> times(static_cast<std::size_t>(iterations_));
    // The block size of the current run; the lambdas below read it.
    std::size_t bytes = max_bytes;
    int count = static_cast<int>(bytes);

    auto fill_send = [&](iso::Collective collective, std::uint32_t seed) {
      const int blocks = collective == iso::Collective::alltoall ? s : 1;
      for (int i = 0; i < blocks; ++i)
        for (std::size_t b = 0; b < bytes; ++b)
          send[i * bytes + b] = pattern(seed, rank, i, b);
    };
    auto fill_expected = [&](iso::Collective collective, std::uint32_t seed) {
      for (int i = 0; i < s; ++i) {
        const int source = nbh.source_rank(i);
        const int block = collective == iso::Collective::alltoall ? i : 0;
        for (std::size_t b = 0; b < bytes; ++b)
          expected[i * bytes + b] = source < 0 ? sentinel(seed) : pattern(seed, source, block, b);
      }
    };
    auto clear_recv = [&](std::vector<unsigned char>& buffer, std::uint32_t seed) {
      std::fill(buffer.begin(), buffer.end(), sentinel(seed));
    };
    auto mpi_neighbor = [&](iso::Collective collective) {
      if (collective == iso::Collective::alltoall)
        ISO_MPI_CHECK(MPI_Neighbor_alltoall(compact_send.data(), count, MPI_BYTE,
                                            compact_recv.data(), count, MPI_BYTE, graph.get()));
      else
        ISO_MPI_CHECK(MPI_Neighbor_allgather(send.data(), count, MPI_BYTE, compact_recv.data(),
                                             count, MPI_BYTE, graph.get()));
    };
    // Number of receive blocks that differ from `want`, reporting the first few.
    auto count_bad_blocks = [&](const std::vector<unsigned char>& got,
                                const std::vector<unsigned char>& want, const std::string& what) {
      int bad = 0;
      for (int i = 0; i < s; ++i) {
        if (std::memcmp(got.data() + i * bytes, want.data() + i * bytes, bytes) == 0) continue;
        if (++bad <= 3)
          std::cerr << fmt::format("rank {}: {}: block {} (offset {}, source rank {}) differs\n",
                                   rank, what, i, offset_text(offsets, i), nbh.source_rank(i));
      }
      return bad;
    };
    auto timed = [&](auto&& call) {
      for (int k = 0; k < warmup_; ++k)
        call();
      for (auto& t : times) {
        MPI_Barrier(cart.get());
        const double start = MPI_Wtime();
        call();
        t = MPI_Wtime() - start;
      }
      double local = median(times);
      double global = 0;
      ISO_MPI_CHECK(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, cart.get()));
      return global;
    };

    struct Row {
      long bytes = 0;
      std::string algorithm;
      std::string collective;
      long bad_blocks = 0;
      double seconds = 0;
      double mpi_seconds = 0;
      double predicted = 0;
      std::string note;
    };
    std::vector<Row> rows;
    const std::uint32_t seeds[2] = {1, 2};
    std::vector<iso::Algorithm> algorithms;  // the table's: linear, torus, direct, mpi, auto
    for (const iso::AlgorithmInfo& info : iso::algorithm_table()) algorithms.push_back(info.algorithm);

    for (std::size_t size_index = 0; size_index < sizes.size(); ++size_index) {
      const SizePrediction& predicted = predictions.sizes[size_index];
      bytes = static_cast<std::size_t>(sizes[size_index]);
      count = static_cast<int>(bytes);
      for (iso::Collective collective : plan_collectives()) {
        const std::string collective_name = iso::to_string(collective);
        // MPI's result for each seed, scattered back to the isomorphic layout.
        std::vector<std::vector<unsigned char>> mpi_result;
        long reference_bad = 0;
        for (std::uint32_t seed : seeds) {
          fill_send(collective, seed);
          for (std::size_t k = 0; k < target_blocks.size(); ++k)
            std::memcpy(compact_send.data() + k * bytes, send.data() + target_blocks[k] * bytes,
                        bytes);
          mpi_neighbor(collective);
          clear_recv(reference, seed);
          for (std::size_t k = 0; k < source_blocks.size(); ++k)
            std::memcpy(reference.data() + source_blocks[k] * bytes,
                        compact_recv.data() + k * bytes, bytes);
          fill_expected(collective, seed);
          if (!mpi_untrusted)
            reference_bad += count_bad_blocks(reference, expected, "MPI_Neighbor_" + collective_name);
          mpi_result.push_back(reference);
        }
        const double mpi_seconds = timed([&] { mpi_neighbor(collective); });

        for (iso::Algorithm algorithm : algorithms) {
          Row row;
          row.bytes = static_cast<long>(bytes);
          row.algorithm = iso::to_string(algorithm);
          row.collective = collective_name;
          row.mpi_seconds = mpi_seconds;
          iso::OperationOptions options;
          options.algorithm = algorithm;
          iso::Operation op = collective == iso::Collective::alltoall
                                  ? iso::alltoall_init(nbh, send.data(), count, MPI_BYTE,
                                                       recv.data(), count, MPI_BYTE, options)
                                  : iso::allgather_init(nbh, send.data(), count, MPI_BYTE,
                                                        recv.data(), count, MPI_BYTE, options);
          const iso::Algorithm ran = op.algorithm();
          row.predicted = predicted.at(ran, collective).seconds;
          if (algorithm == iso::Algorithm::automatic) {
            row.algorithm = std::string("auto\u2192") + iso::to_string(ran);
            if (op.tune_cached())  // auto followed what tune measured earlier
              row.note = fmt::format("tune cache (the model picks {})", iso::to_string(predicted.chosen(collective)));
            else if (ran != predicted.chosen(collective))
              row.note = fmt::format("MISMATCH: plan --predict picks {}",
                                     iso::to_string(predicted.chosen(collective)));
          } else if (algorithm == iso::Algorithm::tune) {
            row.algorithm = "tune\u2192" + iso::algorithm_label(ran, op.ports());
            row.note = fmt::format("fastest of {} candidates timed {}", op.tune_trials().size(),
                                   op.tune_cached() ? "earlier (tune cache)" : "now");
          } else if (algorithm == iso::Algorithm::mpi && !predictions.mpi_candidate) {
            row.note = "not a candidate of auto";
          }
          const std::string what =
              row.algorithm + " " + collective_name + " " + std::to_string(bytes) + " B";
          long bad = 0;
          // One operation, run again with new data in its buffers.
          for (int k = 0; k < 2; ++k) {
            const std::uint32_t seed = seeds[k];
            fill_send(collective, seed);
            fill_expected(collective, seed);
            clear_recv(recv, seed);
            op.run();
            bad += count_bad_blocks(recv, expected, what + " (seed " + std::to_string(seed) + ")");
            if (!mpi_untrusted)
              bad += count_bad_blocks(recv, mpi_result[static_cast<std::size_t>(k)],
                                      what + " vs MPI_Neighbor_" + collective_name);
          }
          row.seconds = timed([&] { op.run(); });
          // The last of many runs still delivers the right data.
          bad += count_bad_blocks(recv, expected, what + " after the timed runs");
          row.bad_blocks = bad;
          rows.push_back(row);
        }
        if (reference_bad) {
          Row row;
          row.bytes = static_cast<long>(bytes);
          row.algorithm = "MPI";
          row.collective = collective_name;
          row.bad_blocks = reference_bad;
          rows.push_back(row);
        }
      }
    }

    // Agree on the verdict: every rank's failures count.
    std::vector<long> local_bad;
    for (const auto& row : rows)
      local_bad.push_back(row.bad_blocks);
    std::vector<long> total_bad(local_bad.size());
    ISO_MPI_CHECK(MPI_Allreduce(local_bad.data(), total_bad.data(),
                                static_cast<int>(local_bad.size()), MPI_LONG, MPI_SUM, cart.get()));
    long failures = 0;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      rows[k].bad_blocks = total_bad[k];
      // auto's pick is the same on every rank (the library agrees on it).
      failures += total_bad[k] != 0 || rows[k].note.rfind("MISMATCH", 0) == 0;
    }

    if (mpi.rank == 0) {
      // The label column fits the longest label ("tune→linear:p2"), counted
      // in characters as fmt pads them (the arrow is one, three bytes).
      auto display_width = [](const std::string& text) {
        return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
          return (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // not a continuation byte
        }));
      };
      std::size_t label_width = display_width("algorithm");
      for (const auto& row : rows)
        label_width = std::max(label_width, display_width(row.algorithm));
      long shown_bytes = -1;
      for (const auto& row : rows) {
        if (row.bytes != shown_bytes) {
          std::cout << fmt::format("{}blocks of {} bytes\n", shown_bytes < 0 ? "" : "\n",
                                   row.bytes);
          shown_bytes = row.bytes;
          std::cout << fmt::format("{:<{}}  {:<10}  {:<8}  {:>14}  {:>14}  {:>17}  {:>6}\n",
                                   "algorithm", label_width, "collective", "verified",
                                   "predicted [us]", "time/call [us]", "MPI neighbor [us]",
                                   "ratio");
        }
        if (row.algorithm == "MPI") {
          std::cout << fmt::format("{:<{}}  {:<10}  {:<8}  ({} wrong blocks in MPI_Neighbor_{})\n",
                                   row.algorithm, label_width, row.collective, "FAILED",
                                   row.bad_blocks, row.collective);
          continue;
        }
        std::string line = fmt::format(
            "{:<{}}  {:<10}  {:<8}  {:>14.2f}  {:>14.2f}  {:>17.2f}  {:>6.2f}", row.algorithm,
            label_width, row.collective, row.bad_blocks ? "FAILED" : "OK", row.predicted * 1e6,
            row.seconds * 1e6, row.mpi_seconds * 1e6,
            row.mpi_seconds > 0 ? row.seconds / row.mpi_seconds : 0.0);
        if (!row.note.empty()) line += "  " + row.note;
        std::cout << line << "\n";
      }
      std::cout << fmt::format(
          "\npredicted: the cost model's time per call (maximum over ranks), as auto weighs it; "
          "auto\u2192X: the\nalgorithm Algorithm::automatic picked; tune\u2192X: the fastest candidate Algorithm::tune timed at init.\ntime/call: median of {} "
          "calls, maximum over ranks;\nratio = time/call divided by MPI's neighborhood "
          "collective (below 1: faster)\n",
          iterations_);
      if (!predictions.mpi_candidate)
        std::cout << "mpi is not a candidate of auto here: a process sends two blocks to the "
                     "same rank (tiny torus,\ndocs/design/irregular.md#repeated-partners-on-tiny-tori); its row runs it anyway\n";
      if (failures == 0)
        std::cout << fmt::format("Solution validates: {} exchanges verified on {} ranks\n",
                                 rows.size(), mpi.size);
      else
        std::cout << fmt::format("Solution does not validate: {} of {} exchanges FAILED\n",
                                 failures, rows.size());
      std::cout.flush();
    }
    return failures == 0 ? 0 : 1;
  }

private:
  // The model of the predicted column, made the one Algorithm::automatic uses
  // too: CostModel::for_comm takes the first model it is given per process,
  // from ISO_COST_MODEL, so --model points ISO_COST_MODEL at it before the
  // first operation. Collective; errors are the same UsageError on every rank.
  iso::CostModel resolve_model(const MpiContext& mpi, std::string& note) const {
    const std::string& spec = model_args_.model;
    std::string handover;  // ISO_COST_MODEL for for_comm; empty: leave the environment alone
    std::string temporary;
    iso::CostModel wanted = iso::CostModel::builtin();
    const char* environment_value = std::getenv("ISO_COST_MODEL");
    const std::string environment = environment_value ? environment_value : "";
    if (spec == "defaults") {
      handover = "defaults";
      note = "built-in defaults (--model defaults)";
    } else if (spec == "calibrate") {
      wanted = iso::CostModel::calibrate(MPI_COMM_WORLD);
      note = fmt::format("calibrated now on {} ranks of MPI_COMM_WORLD", mpi.size);
      // for_comm reads a file on rank 0: hand the figures over in one.
      std::string error;
      if (mpi.rank == 0) {
        if (!model_args_.save.empty()) {
          handover = model_args_.save;
          error = save_model(wanted, handover);
        } else {
          const char* tmp = std::getenv("TMPDIR");
          std::string pattern =
              std::string(tmp && *tmp ? tmp : "/tmp") + "/isostencil_model_XXXXXX";
          const int fd = mkstemp(pattern.data());
          if (fd < 0) {
            error = "--model calibrate: cannot create a temporary file like " + pattern;
          } else {
            close(fd);
            temporary = handover = pattern;
            error = save_model(wanted, handover);
          }
        }
      }
      agree_usage_error(error, MPI_COMM_WORLD);
      handover = broadcast_string(handover, MPI_COMM_WORLD);
    } else if (!spec.empty()) {
      std::string error;
      if (mpi.rank == 0) {
        try {
          wanted = load_model(spec);
        } catch (const UsageError& e) {
          error = e.what();
        }
      }
      agree_usage_error(error, MPI_COMM_WORLD);
      handover = spec;
      note = "--model " + spec;
    }
    if (!handover.empty()) setenv("ISO_COST_MODEL", handover.c_str(), 1);
    const iso::CostModel& used = iso::CostModel::for_comm(MPI_COMM_WORLD);
    if (!temporary.empty()) std::remove(temporary.c_str());
    if (spec.empty()) {
      if (used.source == "calibrated")
        note =
            fmt::format("calibrated now on {} ranks (no ISO_COST_MODEL, no cache), written to {}",
                        mpi.size, iso::CostModel::default_cache_path());
      else if (!environment.empty())
        note = "ISO_COST_MODEL=" + environment;
      else
        note = "the cached calibration " + used.source;
    }
    // Whatever the source, the column and auto must use the same figures.
    if (!spec.empty() && mpi.rank == 0 && !same_figures(used, wanted))
      throw iso::Error("the cost model automatic uses (" + used.source + ") differs from --model " +
                       spec);
    if (spec != "calibrate") {
      agree_usage_error(mpi.rank == 0 ? save_model(used, model_args_.save) : std::string(),
                        MPI_COMM_WORLD);
    }
    if (!model_args_.save.empty()) note += "; saved to " + model_args_.save;
    return used;
  }

  static std::string offset_text(const iso::OffsetList& offsets, int i) {
    std::string out = "(";
    for (int j = 0; j < offsets.dims(); ++j)
      out += (j ? "," : "") + std::to_string(offsets[i][j]);
    return out + ")";
  }

  NeighborhoodArgs args_;
  ModelArgs model_args_;
  int iterations_ = 100;
  std::string bytes_ = "1024";
  int warmup_ = 2;
};

}  // namespace

std::unique_ptr<Command> make_demo_command(CLI::App& parent) {
  return std::make_unique<DemoCommand>(parent);
}

}  // namespace isostencil::cli
