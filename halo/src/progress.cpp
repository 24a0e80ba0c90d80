// The progress engine of the persistent collectives, and Operation itself:
// start posts the first step, test and wait advance the steps of every
// active operation of the process.
#include "operation_internal.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

namespace iso {

// sizeof(Word) <= bytes <= 2 sizeof(Word): the first and the last word,
// overlapping in the middle, each a fixed-size copy the compiler inlines.
template <class Word>
static inline void copy_head_tail(char* to, const char* from, std::size_t bytes) {
  Word head, tail;
  std::memcpy(&head, from, sizeof(Word));
  std::memcpy(&tail, from + bytes - sizeof(Word), sizeof(Word));
  std::memcpy(to, &head, sizeof(Word));
  std::memcpy(to + bytes - sizeof(Word), &tail, sizeof(Word));
}

// memcpy for the few bytes of a small collective's blocks without a library
// call (at 1-8 B blocks a 3-D Moore torus alltoall makes ~50 of them per
// start); src and dst never overlap.
static inline void copy_bytes(char* to, const char* from, std::size_t bytes) {
  if (bytes > 16) {
    std::memcpy(to, from, bytes);
  } else if (bytes >= 8) {
    copy_head_tail<std::uint64_t>(to, from, bytes);
  } else if (bytes >= 4) {
    copy_head_tail<std::uint32_t>(to, from, bytes);
  } else if (bytes > 0) {
    to[0] = from[0];
    to[bytes / 2] = from[bytes / 2];
    to[bytes - 1] = from[bytes - 1];
  }
}

Operation::Impl::~Impl() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  // Destroyed while active: finish every remaining round, since partners
  // wait for our later messages; errors cannot be reported from here.
  if (current >= 0) {
    try {
      complete();
    } catch (const Error&) {
      unlink();
      current = -1;
    }
  }
  for (MPI_Request& request : requests)
    if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
  for (MPI_Datatype& type : types)
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  // The next operation on this plan takes the scratch, and with it these
  // bases (AssembledTypes).
  if (plan && plan->reuses_scratch && plan->spare_scratch.empty()) plan->spare_scratch.swap(scratch);
}

void Operation::Impl::post(int step) {
  if (native && !native_persistent) {
    ISO_MPI_CHECK(MPI_Ineighbor_alltoallw(MPI_BOTTOM, send_counts.data(), send_displs.data(),
                                          send_types.data(), MPI_BOTTOM, recv_counts.data(),
                                          recv_displs.data(), recv_types.data(), graph.get(), &requests[0]));
    return;
  }
  // The step's packs, its messages, then its other local moves, which touch
  // no slot its messages touch (execution_steps) and so overlap the transfers.
  const detail::ExecutionPlan& p = *plan;
  const int* moves_at = p.move_begin.data() + 2 * step;
  make_moves(p.moves, moves_at[0], moves_at[1]);
  const int first = p.step_begin[step], last = p.step_begin[step + 1];
  if (!fresh) {
    if (last > first) ISO_MPI_CHECK(MPI_Startall(last - first, requests.data() + first));
  } else {
    post_fresh(first, last);
  }
  make_moves(p.moves, moves_at[1], moves_at[2]);
}

// Posting::fresh (instantiate() in operation_build.cpp): the step's receives
// and sends made anew, in the plan's order (a round's receive before its send).
void Operation::Impl::post_fresh(int first, int last) {
  const detail::ExecutionPlan& p = *plan;
  for (int k = first; k < last; ++k) {
    const detail::PlainMessage& message = p.messages[static_cast<std::size_t>(k)];
    void* where = message.region == detail::region_absolute
                      ? MPI_BOTTOM
                      : reinterpret_cast<void*>(bases[message.region] + message.offset);
    const MPI_Datatype type =
        message.entry_end > message.entry_begin ? assembled->types[static_cast<std::size_t>(k)] : message.element;
    if (message.sending)
      ISO_MPI_CHECK(MPI_Isend(where, message.elements, type, message.peer, tags[k], comm, &requests[k]));
    else
      ISO_MPI_CHECK(MPI_Irecv(where, message.elements, type, message.peer, tags[k], comm, &requests[k]));
  }
}

// The raw copies inline: a halo of scattered doubles makes tens of thousands
// of them per exchange (34 000 at 128^3, 27 points, 2 ranks), where a call per
// copy showed in the profile.
void Operation::Impl::make_moves(const std::vector<detail::LocalMove>& list, int begin, int end) {
  const MPI_Aint* base = bases.data();
  for (const detail::LocalMove* m = list.data() + begin, *last = list.data() + end; m != last; ++m) {
    if (!m->raw) {
      move(*m);
      continue;
    }
    char* to = reinterpret_cast<char*>(base[m->to_region] + m->to);
    const char* from = reinterpret_cast<const char*>(base[m->from_region] + m->from);
    // In locals: the stores through `to` (a char*) may alias the move, and
    // reloading its fields after each store doubled the loop's cost.
    const int repeat = m->repeat;
    const MPI_Aint to_stride = m->to_stride, from_stride = m->from_stride;
    const std::size_t bytes = m->bytes;
    if (bytes == sizeof(std::uint64_t)) {
      // Single doubles (faces across the fastest dimension, edges along the
      // slower ones): one load and one store each.
      for (int r = 0; r < repeat; ++r, to += to_stride, from += from_stride) {
        std::uint64_t word;
        std::memcpy(&word, from, sizeof word);
        std::memcpy(to, &word, sizeof word);
      }
      continue;
    }
    for (int r = 0; r < repeat; ++r, to += to_stride, from += from_stride) copy_bytes(to, from, bytes);
  }
}

void Operation::Impl::move(const detail::LocalMove& m) {
  const MPI_Aint from = bases[m.from_region] + m.from, to = bases[m.to_region] + m.to;
  if (m.raw) {
    copy_bytes(reinterpret_cast<char*>(to), reinterpret_cast<const char*>(from), m.bytes);
    return;
  }
  // A contiguous side (no type) is read or written in place: one MPI call,
  // and none on contiguous bytes, where MPICH 4.0.2's MPI_Pack was seen to
  // move fewer bytes than the type holds (docs/mpich.md). Every call must
  // move all `bytes`: a short copy is an error, never silently wrong ghosts.
  const int bytes = static_cast<int>(m.bytes);
  int position = 0;
  if (m.from_type == MPI_DATATYPE_NULL) {
    ISO_MPI_CHECK(MPI_Unpack(reinterpret_cast<const void*>(from), bytes, &position,
                             reinterpret_cast<void*>(to), m.to_count, m.to_type, comm));
  } else if (m.to_type == MPI_DATATYPE_NULL) {
    ISO_MPI_CHECK(MPI_Pack(reinterpret_cast<const void*>(from), m.from_count, m.from_type,
                           reinterpret_cast<void*>(to), bytes, &position, comm));
  } else {
    ISO_MPI_CHECK(MPI_Pack(reinterpret_cast<const void*>(from), m.from_count, m.from_type, bounce.data(),
                           static_cast<int>(bounce.size()), &position, comm));
    if (position == bytes) {
      position = 0;
      ISO_MPI_CHECK(MPI_Unpack(bounce.data(), static_cast<int>(bounce.size()), &position,
                               reinterpret_cast<void*>(to), m.to_count, m.to_type, comm));
    }
  }
  if (position != bytes)
    throw Error("iso: a local copy moved " + std::to_string(position) + " of " + std::to_string(bytes) +
                " bytes (the MPI library's MPI_Pack/MPI_Unpack)");
}

// Progress engine. Rounds advance only when the process calls into the
// library, and a round of one operation may wait for a partner that is
// itself waiting on another operation (start A, B; wait B, A on one rank
// and wait A, B on another). So every wait or test advances all active
// operations of the process. They form an intrusive list: no allocation.
Operation::Impl*& Operation::Impl::active_head() {
  static Impl* head = nullptr;
  return head;
}
void Operation::Impl::link() {
  Impl*& head = active_head();
  previous = nullptr;
  next = head;
  if (head) head->previous = this;
  head = this;
}
void Operation::Impl::unlink() {
  if (previous) previous->next = next;
  else if (active_head() == this) active_head() = next;
  if (next) next->previous = previous;
  previous = next = nullptr;
}

void Operation::Impl::begin() {
  if (steps() == 0) return;
  current = 0;
  link();
  post(0);
}

bool Operation::Impl::advance(bool block) {
  const detail::ExecutionPlan& p = *plan;
  while (current >= 0) {
    const int first = p.step_begin[current];
    const int count = p.step_begin[current + 1] - first;
    if (count == 0) {
      // local moves only: done when posted
    } else if (block) {
      ISO_MPI_CHECK(MPI_Waitall(count, requests.data() + first, MPI_STATUSES_IGNORE));
    } else {
      int done = 0;
      // MPICH 4.0's MPI_Testall fails (MPI_ERR_IN_STATUS, no error in the
      // status) on a persistent collective request; MPI_Test does not.
      if (count == 1)
        ISO_MPI_CHECK(MPI_Test(requests.data() + first, &done, MPI_STATUS_IGNORE));
      else
        ISO_MPI_CHECK(MPI_Testall(count, requests.data() + first, &done, MPI_STATUSES_IGNORE));
      if (!done) return false;
    }
    make_moves(p.unpacks, p.unpack_begin[current], p.unpack_begin[current + 1]);
    if (++current == steps()) {
      current = -1;
      unlink();
    } else {
      post(current);
    }
  }
  return true;
}

void Operation::Impl::advance_others(const Impl* self) {
  for (Impl* op = active_head(); op;) {
    Impl* following = op->next;  // advance() may unlink op
    if (op != self) op->advance(false);
    op = following;
  }
}

void Operation::Impl::complete() {
  while (current >= 0) {
    // Alone, block in MPI; with company, poll everyone.
    const bool alone = active_head() == this && next == nullptr;
    if (advance(alone)) return;
    advance_others(this);
  }
}

Operation make_operation(std::unique_ptr<Operation::Impl> impl) { return Operation(std::move(impl)); }

Operation::Operation() = default;
Operation::Operation(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Operation::Operation(Operation&&) noexcept = default;
Operation& Operation::operator=(Operation&&) noexcept = default;
Operation::~Operation() = default;

void Operation::start() {
  if (!impl_) throw Error("iso::Operation::start: the operation is empty (moved from or default-constructed)");
  if (impl_->current >= 0) throw Error("iso::Operation::start: the operation is already active; wait() first");
  impl_->begin();
}

bool Operation::test() {
  if (!impl_) throw Error("iso::Operation::test: the operation is empty");
  const bool done = impl_->advance(false);
  Impl::advance_others(impl_.get());
  return done;
}

void Operation::wait() {
  if (!impl_) throw Error("iso::Operation::wait: the operation is empty");
  impl_->complete();
}

bool Operation::active() const { return impl_ && impl_->current >= 0; }

const Schedule& Operation::schedule() const {
  if (!impl_) throw Error("iso::Operation::schedule: the operation is empty");
  return *impl_->plan->schedule;
}

Algorithm Operation::algorithm() const { return schedule().algorithm; }

const char* to_string(Posting posting) {
  switch (posting) {
    case Posting::automatic: return "auto";
    case Posting::persistent: return "persistent";
    case Posting::fresh: return "fresh";
  }
  return "?";
}

Posting Operation::posting() const {
  if (!impl_) throw Error("iso::Operation::posting: the operation is empty");
  if (impl_->native) return impl_->native_persistent ? Posting::persistent : Posting::fresh;
  return impl_->fresh ? Posting::fresh : Posting::persistent;
}

int Operation::ports() const {
  if (!impl_) throw Error("iso::Operation::ports: the operation is empty");
  return impl_->plan->ports;
}

const std::vector<TuneTrial>& Operation::tune_trials() const {
  if (!impl_) throw Error("iso::Operation::tune_trials: the operation is empty");
  return impl_->trials;
}

bool Operation::tune_cached() const {
  if (!impl_) throw Error("iso::Operation::tune_cached: the operation is empty");
  return impl_->tune_cached;
}

}  // namespace iso
