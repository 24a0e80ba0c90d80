// isostencil-bench-pack: what one message of scattered blocks costs, three
// ways, for the small-message path of halo/src/operation_build.cpp:
//
//   datatype  one hindexed (or struct-of-subarray) datatype, sent zero-copy
//   pack      MPI_Pack into a contiguous buffer, MPI_PACKED, MPI_Unpack
//   runs      the layout flattened once into (address, length) runs, memcpy'd
//             into a contiguous buffer, sent as bytes, memcpy'd out
//   persist   runs, with the bytes moved by persistent requests
//             (MPI_Startall/MPI_Waitall, as iso::Operation does)
//   isend     runs, with the bytes moved by MPI_Irecv/MPI_Isend/MPI_Waitall
//
// Layouts: "round" is one torus round of 3-D Moore r=1 alltoall at 2 ranks (9
// of 26 blocks of B bytes, every third block of the buffer); "face" is one
// face of an n^3 array of doubles with one ghost layer (subarray, C order;
// --face-dim picks the normal: 0 gives n rows of n doubles, 2 gives n*n
// single doubles).
//
// Every rank exchanges with rank ^ 1 (itself at 1 rank: then no time is spent
// waiting for a partner, so callgrind instruction counts are deterministic;
// run e.g. `valgrind --tool=callgrind --toggle-collect='run_*' ...`). The
// three ways take turns repetition by repetition; the median per call is
// printed. Each received message is checked against the sender's data first.
#include "bench_main.hpp"
#include "isostencil/bench/stats.hpp"

#include <mpi.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Run {
  MPI_Aint offset;
  int bytes;
};

struct Layout {
  std::vector<Run> runs;  // in type-map order, relative to the buffer
  std::size_t buffer_bytes = 0;
  int total = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;  // over the same bytes, from the buffer's start
};

Layout round_layout(int block) {
  Layout layout;
  layout.buffer_bytes = static_cast<std::size_t>(26) * block;
  std::vector<MPI_Aint> displacements;
  for (int i = 0; i < 26; i += 3) {
    layout.runs.push_back({static_cast<MPI_Aint>(i) * block, block});
    displacements.push_back(static_cast<MPI_Aint>(i) * block);
    layout.total += block;
  }
  MPI_Type_create_hindexed_block(static_cast<int>(displacements.size()), block,
                                 displacements.data(), MPI_BYTE, &layout.type);
  MPI_Type_commit(&layout.type);
  return layout;
}

Layout face_layout(int n, int normal) {
  Layout layout;
  const int e = n + 2;
  layout.buffer_bytes = static_cast<std::size_t>(e) * e * e * sizeof(double);
  int sizes[3] = {e, e, e}, sub[3] = {n, n, n}, start[3] = {1, 1, 1};
  sub[normal] = 1;
  MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &layout.type);
  MPI_Type_commit(&layout.type);
  for (int i = start[0]; i < start[0] + sub[0]; ++i)
    for (int j = start[1]; j < start[1] + sub[1]; ++j) {
      const MPI_Aint row = ((static_cast<MPI_Aint>(i) * e + j) * e + start[2]) *
                           static_cast<MPI_Aint>(sizeof(double));
      layout.runs.push_back({row, sub[2] * static_cast<int>(sizeof(double))});
      layout.total += sub[2] * static_cast<int>(sizeof(double));
    }
  // Touching rows are one run (normal 0 and 1 at full width stay separate).
  std::vector<Run> merged;
  for (const Run& run : layout.runs) {
    if (!merged.empty() && merged.back().offset + merged.back().bytes == run.offset)
      merged.back().bytes += run.bytes;
    else
      merged.push_back(run);
  }
  layout.runs = merged;
  return layout;
}

struct Exchange {
  const Layout& layout;
  int peer;
  std::vector<char> out, in, stage_out, stage_in;
  int pack_size = 0;
  MPI_Request persistent[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  Exchange(const Layout& l, int p) : layout(l), peer(p), out(l.buffer_bytes), in(l.buffer_bytes) {
    MPI_Pack_size(1, layout.type, MPI_COMM_WORLD, &pack_size);
    stage_out.resize(static_cast<std::size_t>(std::max(pack_size, layout.total)));
    stage_in.resize(stage_out.size());
    MPI_Recv_init(stage_in.data(), layout.total, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &persistent[0]);
    MPI_Send_init(stage_out.data(), layout.total, MPI_BYTE, peer, 4, MPI_COMM_WORLD,
                  &persistent[1]);
  }
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  ~Exchange() {
    MPI_Request_free(&persistent[0]);
    MPI_Request_free(&persistent[1]);
  }
};

__attribute__((noinline)) void run_datatype(Exchange& x) {
  MPI_Sendrecv(x.out.data(), 1, x.layout.type, x.peer, 1, x.in.data(), 1, x.layout.type, x.peer, 1,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

__attribute__((noinline)) void run_pack(Exchange& x) {
  int position = 0;
  MPI_Pack(x.out.data(), 1, x.layout.type, x.stage_out.data(), x.pack_size, &position,
           MPI_COMM_WORLD);
  MPI_Sendrecv(x.stage_out.data(), position, MPI_PACKED, x.peer, 2, x.stage_in.data(), x.pack_size,
               MPI_PACKED, x.peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  position = 0;
  MPI_Unpack(x.stage_in.data(), x.pack_size, &position, x.in.data(), 1, x.layout.type,
             MPI_COMM_WORLD);
}

void pack_runs(Exchange& x) {
  char* stage = x.stage_out.data();
  for (const Run& run : x.layout.runs) {
    std::memcpy(stage, x.out.data() + run.offset, static_cast<std::size_t>(run.bytes));
    stage += run.bytes;
  }
}

void unpack_runs(Exchange& x) {
  const char* from = x.stage_in.data();
  for (const Run& run : x.layout.runs) {
    std::memcpy(x.in.data() + run.offset, from, static_cast<std::size_t>(run.bytes));
    from += run.bytes;
  }
}

__attribute__((noinline)) void run_runs(Exchange& x) {
  pack_runs(x);
  MPI_Sendrecv(x.stage_out.data(), x.layout.total, MPI_BYTE, x.peer, 3, x.stage_in.data(),
               x.layout.total, MPI_BYTE, x.peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  unpack_runs(x);
}

__attribute__((noinline)) void run_persist(Exchange& x) {
  pack_runs(x);
  MPI_Startall(2, x.persistent);
  MPI_Waitall(2, x.persistent, MPI_STATUSES_IGNORE);
  unpack_runs(x);
}

__attribute__((noinline)) void run_isend(Exchange& x) {
  pack_runs(x);
  MPI_Request requests[2];
  MPI_Irecv(x.stage_in.data(), x.layout.total, MPI_BYTE, x.peer, 5, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(x.stage_out.data(), x.layout.total, MPI_BYTE, x.peer, 5, MPI_COMM_WORLD, &requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  unpack_runs(x);
}

struct Settings {
  std::vector<int> blocks{8, 1024};
  std::vector<int> faces{16};
  int face_dim = 2, reps = 2000, calls = 10;
};

// Not named run_*: callgrind's --toggle-collect='run_*' selects the ways alone.
int measure_layouts(const Settings& s, int rank, int size) {
  if (size > 2 && rank == 0)
    std::fprintf(stderr, "isostencil-bench-pack: ranks beyond 2 sit idle\n");
  const int peer = size == 1 ? 0 : (rank ^ 1) < size ? rank ^ 1 : MPI_PROC_NULL;
  std::vector<std::pair<std::string, Layout>> layouts;
  // A size of 0 leaves that layout out (callgrind runs of one layout each).
  for (int b : s.blocks)
    if (b > 0) layouts.emplace_back("round-" + std::to_string(b) + "B", round_layout(b));
  for (int n : s.faces)
    if (n > 0)
      layouts.emplace_back("face" + std::to_string(s.face_dim) + "-" + std::to_string(n),
                           face_layout(n, s.face_dim));
  if (rank == 0)
    std::printf("%-16s %8s %6s %12s %12s %12s %12s %12s %8s %8s\n", "layout", "bytes", "runs",
                "datatype_us", "pack_us", "runs_us", "persist_us", "isend_us", "dt/runs",
                "dt/pers");
  int failures = 0;
  for (auto& [name, layout] : layouts) {
    Exchange x(layout, peer);
    using Way = void (*)(Exchange&);
    constexpr int num_ways = 5;
    const Way ways[num_ways] = {run_datatype, run_pack, run_runs, run_persist, run_isend};
    // Correctness: each way delivers the partner's bytes at the same places.
    for (Way way : ways) {
      for (std::size_t k = 0; k < x.out.size(); ++k)
        x.out[k] = static_cast<char>(k * 7 + rank);
      std::fill(x.in.begin(), x.in.end(), 0);
      way(x);
      if (peer == MPI_PROC_NULL) continue;
      for (const Run& run : layout.runs)
        for (int k = 0; k < run.bytes; ++k)
          if (x.in[static_cast<std::size_t>(run.offset + k)] !=
              static_cast<char>((run.offset + k) * 7 + peer)) {
            ++failures;
            k = run.bytes;
          }
    }
    std::vector<double> t[num_ways];
    for (int r = 0; r < s.reps; ++r)
      for (int w = 0; w < num_ways; ++w) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double begin = MPI_Wtime();
        for (int c = 0; c < s.calls; ++c)
          ways[w](x);
        t[w].push_back((MPI_Wtime() - begin) / s.calls * 1e6);
      }
    const double d = isobench::median(t[0]), p = isobench::median(t[1]), m = isobench::median(t[2]),
                 ps = isobench::median(t[3]), is = isobench::median(t[4]);
    if (rank == 0)
      std::printf("%-16s %8d %6zu %12.3f %12.3f %12.3f %12.3f %12.3f %8.2f %8.2f\n", name.c_str(),
                  layout.total, layout.runs.size(), d, p, m, ps, is, d / m, d / ps);
    MPI_Type_free(&layout.type);
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && failures)
    std::fprintf(stderr, "isostencil-bench-pack: %d wrong runs\n", failures);
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  isobench::BenchMain bench(argc, argv, "isostencil-bench-pack");
  CLI::App app{"isostencil-bench-pack: one scattered message as datatype, MPI_Pack or memcpy runs"};
  Settings s;
  app.add_option("--block", s.blocks, "round layout: block sizes in bytes (0: none)");
  app.add_option("--face", s.faces,
                 "face layout: interior edge n of an n^3 array of doubles (0: none)");
  app.add_option("--face-dim", s.face_dim, "face normal (0..2)")->check(CLI::Range(0, 2));
  app.add_option("--reps", s.reps, "timed repetitions (each `calls` calls per way)")
      ->check(CLI::PositiveNumber);
  app.add_option("--calls", s.calls, "calls per repetition")->check(CLI::PositiveNumber);
  if (const auto code = bench.parse(app)) return *code;
  return bench.run([&] { return measure_layouts(s, bench.rank(), bench.size()); });
}
