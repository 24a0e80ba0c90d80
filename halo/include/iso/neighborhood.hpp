// Cartesian communicators and isomorphic neighborhoods (MPI layer).
#pragma once

#include "iso/geometry.hpp"
#include "iso/schedule.hpp"

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace iso {

/// Move-only owner of a communicator; never frees MPI_COMM_WORLD/SELF/NULL.
class Comm {
public:
  Comm() = default;
  explicit Comm(MPI_Comm comm) : comm_(comm) {}
  Comm(Comm&& other) noexcept : comm_(other.comm_) { other.comm_ = MPI_COMM_NULL; }
  Comm& operator=(Comm&& other) noexcept;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm() { reset(); }

  MPI_Comm get() const { return comm_; }
  void reset();

private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

/// A Cartesian communicator of `parent`'s processes. Zero entries of `dims` are
/// chosen by MPI_Dims_create; `periodic` defaults to all true when empty.
/// Copies share the communicator (freed with the last copy).
class CartComm {
public:
  CartComm(MPI_Comm parent, std::vector<int> dims, std::vector<bool> periodic = {},
           bool reorder = false);
  MPI_Comm get() const { return comm_ ? comm_->get() : MPI_COMM_NULL; }
  const CartGeometry& geometry() const { return geometry_; }
  /// Shared by the copies of this communicator and by no other: an identity
  /// for caches kept per communicator (a handle value comes back once freed).
  std::shared_ptr<const void> owner() const { return comm_; }

  /// The constructor's checks, local (no communication): completes `dims`
  /// (MPI_Dims_create) and `periodic` (all true when empty); returns the
  /// error, empty when there is none.
  static std::string check(MPI_Comm parent, std::vector<int>& dims, std::vector<bool>& periodic);
  /// Shared communicators for layers that make many equal ones (a grid per
  /// run or per test): find_shared is local and gives a live communicator
  /// that create_shared made with these completed `dims` and `periodic`
  /// over the processes of `parent` in its order, or nothing. Callers agree
  /// that every rank found one before using it (iso::agree_on_errors_and_all),
  /// and call create_shared, collective and without an agreement of its own,
  /// with arguments every rank checked and agreed on. No reordering.
  static std::unique_ptr<CartComm> find_shared(MPI_Comm parent, const std::vector<int>& dims,
                                               const std::vector<bool>& periodic);
  static CartComm create_shared(MPI_Comm parent, std::vector<int> dims, std::vector<bool> periodic);

private:
  CartComm() = default;
  std::shared_ptr<Comm> comm_;
  CartGeometry geometry_;
};

struct NeighborhoodOptions {
  /// Compare a hash of (offsets, dims, periods) over all ranks at creation, so
  /// a neighborhood that differs between ranks is an error on every rank.
  bool verify = true;
};

namespace detail {
struct SharedComm;
}

/// An isomorphic neighborhood on a Cartesian communicator. Creation is
/// collective over `cart`; the neighborhood communicates on a duplicate of
/// it, so user traffic on `cart` never matches the collectives' messages.
/// Every neighborhood on `cart` shares one duplicate (cached on `cart`, freed
/// once `cart` and all those neighborhoods are gone), so only the first
/// creation on a communicator pays for MPI_Comm_dup.
class Neighborhood {
public:
  Neighborhood(MPI_Comm cart, OffsetList offsets, const NeighborhoodOptions& options = {});
  ~Neighborhood();
  Neighborhood(Neighborhood&& other) noexcept;
  Neighborhood& operator=(Neighborhood&& other) noexcept;
  Neighborhood(const Neighborhood&) = delete;
  Neighborhood& operator=(const Neighborhood&) = delete;

  MPI_Comm comm() const { return comm_; }
  const OffsetList& offsets() const { return offsets_; }
  const CartGeometry& geometry() const { return geometry_; }
  const std::vector<int>& coords() const { return coords_; }
  int rank() const { return rank_; }
  int size() const { return static_cast<int>(offsets_.size()); }

  /// This process's schedule, computed once per (algorithm, collective) and
  /// kept: every init on the neighborhood reuses it.
  const Schedule& schedule(Algorithm algorithm, Collective collective) const;
  /// The same schedule, shared with the process's schedule cache (one per
  /// offsets, grid, coordinates, algorithm and collective).
  std::shared_ptr<const Schedule> shared_schedule(Algorithm algorithm, Collective collective) const;
  /// Rank that block i is sent to / received from (-1: none, non-periodic mesh).
  int target_rank(int block) const;
  int source_rank(int block) const;
  /// Whether some rank is this process's target for two blocks, or its source
  /// for two (tiny tori: 2 processes along a periodic dimension, or 1).
  bool has_repeated_partner() const;

  /// First of `count` consecutive message tags on comm() reserved for one
  /// operation, so operations share the communicator yet never match each
  /// other's messages; -1 once the tag space (MPI_TAG_UB) is used up.
  /// Operations are created in the same order on every rank, so the ranks
  /// agree on the tags. Neighborhoods sharing a communicator share the count.
  int reserve_tags(int count) const;

  /// Algorithm::automatic's choices on this neighborhood, by a key of the
  /// operation (collective, block sizes, ports) that was the same on every
  /// rank when the choice was made: a later init with that key agrees on the
  /// kept choice inside its argument agreement instead of predicting again
  /// in a collective call of its own (docs/design/cost-model.md#kept-choices).
  struct KeptChoice {
    Algorithm algorithm = Algorithm::automatic;
    int ports = 0;
    /// Where the choice came from the tune cache: its trials (else empty).
    std::vector<TuneTrial> measured;
  };
  const KeptChoice* kept_choice(std::uint64_t key) const;
  void keep_choice(std::uint64_t key, KeptChoice choice) const;

  /// iso::machine_signature of comm(), computed once per communicator and
  /// kept (collective the first time: call it where every rank does).
  const std::string& machine_signature() const;

private:
  detail::SharedComm* shared_ = nullptr;
  MPI_Comm comm_ = MPI_COMM_NULL;
  OffsetList offsets_;
  CartGeometry geometry_;
  std::vector<int> coords_;
  int rank_ = 0;
  std::uint64_t offsets_hash_ = 0;
  mutable std::map<std::pair<Algorithm, Collective>, std::shared_ptr<const Schedule>> schedules_;
  mutable std::map<std::uint64_t, KeptChoice> choices_;
};

}  // namespace iso
