// The packed transport of core::HaloExchange (not installed): pack kernels,
// one contiguous buffer per direction of travel in the pattern's block
// order, the isomorphic alltoallv over it, host staging, unpack kernels;
// blocks a process sends itself go straight from interior to ghosts in the
// pack kernel. halo_transport.cpp is the one file of core/ with device kernels.
#pragma once

#include "isostencil/core/halo_exchange.hpp"

#include <memory>
#include <vector>

namespace isostencil::core::detail {

class PackedTransport {
public:
  using execution_space = HaloExchange::execution_space;

  /// Collective over the pattern's communicator (alltoallv_init, automatic
  /// resolved there). `stage`: the buffers go through host mirrors around
  /// MPI; `pack_on_host`: kernels on DefaultHostExecutionSpace.
  PackedTransport(const HaloPattern& pattern, MPI_Datatype element, const std::vector<void*>& fields,
                  bool stage, bool pack_on_host);
  ~PackedTransport();

  /// Packs on `space` (after the work already queued there; the blocks to
  /// itself straight into the ghosts), copies to the host mirror when
  /// staged, fences `space`, posts the first round.
  void start(const execution_space& space);
  /// Advances; once complete, unpacks on `space` and fences it; true then.
  bool test(const execution_space& space);
  /// Completes, unpacks on `space` and fences it.
  void wait(const execution_space& space);

  /// Phase times go to `sink` (null: none, no fences between phases).
  void time_phases(HaloPhaseTimes* sink);
  bool staged() const;
  int direct_blocks() const;
  const iso::Operation& operation() const;

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace isostencil::core::detail
