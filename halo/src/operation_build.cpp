// An operation's messages and local moves, built from this process's
// schedule: staging slots for blocks in transit, message datatypes or plain
// runs of bytes, copies inside the process, grouped in steps. The part that
// depends only on the buffers' layout (the execution plan) is kept, and a
// later operation with the same layout only makes its requests (persistent
// ones, or none where it posts afresh: docs/design/irregular.md#posting).
#include "operation_internal.hpp"
#include "smpi_compat.hpp"

#include "iso/cost_model.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace iso::detail {

namespace {

// Gives an operation its own memory for the plan's regions and the requests
// of its messages. Tags are tag_base + round index, wrapped at the limit.
void instantiate(Operation::Impl& impl, std::shared_ptr<const ExecutionPlan> plan, const Buffers& buffers,
                 int tag_base, Posting posting) {
  int tag_ub_flag = 0;
  int* tag_ub = nullptr;
  ISO_MPI_CHECK(MPI_Comm_get_attr(impl.comm, MPI_TAG_UB, &tag_ub, &tag_ub_flag));
  const long tag_limit = (tag_ub_flag && tag_ub) ? *tag_ub : 32767;
  if (impl.scratch.empty() && plan->spare_scratch.size() == std::max<std::size_t>(1, plan->scratch_units))
    impl.scratch.swap(plan->spare_scratch);
  if (impl.scratch.empty()) impl.scratch.resize(std::max<std::size_t>(1, plan->scratch_units));
  std::size_t image_total = 0;
  for (std::size_t bytes : plan->image_bytes) image_total += bytes;
  impl.images.resize(image_total);
  impl.bases.assign(region_image + plan->image_bytes.size(), 0);
  impl.bases[region_send] = buffers.send_base;
  impl.bases[region_recv] = buffers.recv_base;
  impl.bases[region_scratch] = address_of(impl.scratch.data());
  MPI_Aint image = address_of(impl.images.data());
  for (std::size_t k = 0; k < plan->image_bytes.size(); ++k) {
    impl.bases[region_image + k] = image;
    image += static_cast<MPI_Aint>(plan->image_bytes[k]);
  }
  // SMPI 3.32 loses the message of a restarted persistent send whose
  // receiver has not restarted its receive yet: there every post is fresh.
  impl.fresh = ISO_SMPI || posting == Posting::fresh ||
               (posting == Posting::automatic && plan->largest_message <= fresh_posting_limit);
  impl.requests.assign(plan->messages.size(), MPI_REQUEST_NULL);
  impl.tags.assign(impl.fresh ? plan->messages.size() : 0, 0);
  impl.assembled.reset();
  if (plan->reuses_scratch) {
    // The only datatypes made per operation: the spanning messages' entries
    // at this operation's bases, from MPI_BOTTOM; the last ones made where
    // the bases are the same.
    const std::shared_ptr<const AssembledTypes>& last = plan->last_assembled;
    if (last && std::equal(last->bases, last->bases + region_image, impl.bases.begin())) {
      impl.assembled = last;
    } else {
      auto made = std::make_shared<AssembledTypes>();
      std::copy(impl.bases.begin(), impl.bases.begin() + region_image, made->bases);
      made->types.assign(plan->messages.size(), MPI_DATATYPE_NULL);
      std::vector<int> counts;
      std::vector<MPI_Aint> at;
      std::vector<MPI_Datatype> types;
      for (std::size_t k = 0; k < plan->messages.size(); ++k) {
        const PlainMessage& message = plan->messages[k];
        if (message.entry_end == message.entry_begin) continue;
        counts.clear(), at.clear(), types.clear();
        for (int j = message.entry_begin; j < message.entry_end; ++j) {
          const SpanningEntry& entry = plan->spanning[static_cast<std::size_t>(j)];
          counts.push_back(entry.count);
          at.push_back(impl.bases[entry.region] + entry.offset);
          types.push_back(entry.type);
        }
        commit_indexed(counts, at, types, made->types[k]);
      }
      impl.assembled = made;
      plan->last_assembled = std::move(made);
    }
  }
  for (std::size_t k = 0; k < plan->messages.size(); ++k) {
    const PlainMessage& message = plan->messages[k];
    MPI_Datatype type = message.element;
    if (message.entry_end > message.entry_begin) type = impl.assembled->types[k];
    // Wraps only on a private duplicate with more rounds than tags; messages
    // of one pair are then matched in posting order, the same on both sides.
    const int tag = static_cast<int>((tag_base + static_cast<long>(message.round_index)) % (tag_limit + 1));
    if (impl.fresh) {
      impl.tags[k] = tag;
      continue;
    }
    const bool absolute = message.region == region_absolute;
    void* where = absolute ? MPI_BOTTOM : reinterpret_cast<void*>(impl.bases[message.region] + message.offset);
    if (message.sending)
      ISO_MPI_CHECK(MPI_Send_init(where, message.elements, type, message.peer, tag, impl.comm, &impl.requests[k]));
    else
      ISO_MPI_CHECK(MPI_Recv_init(where, message.elements, type, message.peer, tag, impl.comm, &impl.requests[k]));
  }
  impl.plan = std::move(plan);
}

}  // namespace

AssembledTypes::~AssembledTypes() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Datatype& type : types)
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
}

ExecutionPlan::~ExecutionPlan() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MessagePart& part : parts)
    if (part.type != MPI_DATATYPE_NULL) MPI_Type_free(&part.type);
  for (MPI_Datatype& type : kept_types)
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
}

std::unique_ptr<Operation::Impl> build_scheduled(const Neighborhood& neighborhood, Algorithm algorithm,
                                                 Collective collective, Buffers buffers, int ports,
                                                 Posting posting) {
  auto impl = std::make_unique<Operation::Impl>();
  const std::shared_ptr<const Schedule> shared_schedule = neighborhood.shared_schedule(algorithm, collective);
  const Schedule& plan = *shared_schedule;
  // Tags base + round index (base + global rounds: the local copies) keep
  // this operation's messages apart from every other's on the shared
  // communicator; a duplicate only when the tag space is spent.
  int tag_base = neighborhood.reserve_tags(plan.num_global_rounds + 1);
  impl->comm = neighborhood.comm();
  if (tag_base < 0) {
    MPI_Comm dup = MPI_COMM_NULL;
    ISO_MPI_CHECK(MPI_Comm_dup(neighborhood.comm(), &dup));
    impl->own = Comm(dup);
    impl->comm = dup;
    ISO_MPI_CHECK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    tag_base = 0;
  }

  // The key reads the types as the build does: one flattening serves both.
  TypeFacts facts;
  const PlanKey key = plan_key(shared_schedule, neighborhood.rank(), ports, buffers, facts);
  if (key.usable)
    if (std::shared_ptr<const ExecutionPlan> cached = find_plan(key)) {
      instantiate(*impl, std::move(cached), buffers, tag_base, posting);
      return impl;
    }
  buffers.materialize(neighborhood.size());
  auto built = std::make_shared<ExecutionPlan>();
  ExecutionPlan& out = *built;
  out.schedule = shared_schedule;
  out.ports = ports;

  // Temporary slots hold block i in transit. Where its signature is n copies
  // of one predefined type (every halo block, however scattered), the slot is
  // n contiguous elements: compact, and independent of where the user's
  // arrays lie. Otherwise it takes the receive block's layout, sized by its
  // true extent and offset by its true lower bound.
  const std::size_t unit = sizeof(std::max_align_t);
  std::vector<BlockDesc> shapes(plan.num_blocks);
  std::vector<std::size_t> slot_units(plan.num_blocks, 0);
  std::vector<MPI_Aint> slot_lowest(plan.num_blocks, 0);
  std::size_t total_units = 0;
  // Blocks come in runs of one count and type (all of them, for alltoall):
  // the shape is asked of MPI once per run (five calls a block were 14 us of
  // the cold set-up at d3 r3).
  int shaped = -1;
  for (int i = 0; i < plan.num_blocks; ++i) {
    if (!plan.uses_temp[i] && !plan.uses_temp2[i]) continue;
    const BlockDesc& block = buffers.recv[i];
    if (shaped >= 0 && buffers.recv[shaped].type == block.type && buffers.recv[shaped].count == block.count) {
      shapes[i] = shapes[shaped], slot_units[i] = slot_units[shaped], slot_lowest[i] = slot_lowest[shaped];
    } else {
      shapes[i] = staging_shape(block);
      const auto [lowest, span] = true_span(type_info(shapes[i].type), shapes[i].count);
      slot_units[i] = (static_cast<std::size_t>(span) + unit - 1) / unit;
      slot_lowest[i] = lowest;
      shaped = i;
    }
    total_units += slot_units[i] * static_cast<std::size_t>(plan.uses_temp[i] + plan.uses_temp2[i]);
  }
  out.scratch_units = std::max<std::size_t>(1, total_units);
  impl->scratch.resize(out.scratch_units);
  // Build-time addresses of the regions, which offsets count from.
  const MPI_Aint scratch_base = address_of(impl->scratch.data());
  const MPI_Aint region_base[region_image] = {0, buffers.send_base, buffers.recv_base, scratch_base};
  MPI_Aint next = scratch_base;
  for (int i = 0; i < plan.num_blocks; ++i) {
    if (plan.uses_temp[i]) {
      buffers.temp[i] = {next - slot_lowest[i], shapes[i].count, shapes[i].type};
      next += static_cast<MPI_Aint>(slot_units[i] * unit);
    }
    if (plan.uses_temp2[i]) {
      buffers.temp2[i] = {next - slot_lowest[i], shapes[i].count, shapes[i].type};
      next += static_cast<MPI_Aint>(slot_units[i] * unit);
    }
  }

  std::vector<MPI_Datatype> kept_from;  // the caller's types duplicated in out.kept_types
  // Below the shared-memory eager limit (Open MPI's vader: 4 KiB with its
  // header) a packed image beat the datatype by 1.1-2x in
  // isostencil-bench-pack; from 4 KiB up, where both go rendezvous, the
  // datatype was 1.3-2x faster (docs/benchmarks.md, "Small messages").
  const long pack_limit = 4000;
  auto region_of = [&](BlockRef ref) { return Buffers::region_of(ref.buffer); };
  auto offset_in = [&](std::uint16_t region, MPI_Aint address) {
    return region < region_image ? address - region_base[region] : address;
  };
  auto add_messages = [&](const std::vector<BlockRef>& send, int send_rank, const std::vector<BlockRef>& recv,
                          int recv_rank, int round_index) {
    // Messages made of one predefined type travel as plain elements: a
    // single run of bytes from its place, several runs (up to pack_limit
    // bytes; runs flattened from the block datatypes at init) through a
    // contiguous image that the step fills before it starts (sends) or
    // empties once done (receives): for small messages MPI's datatype
    // engine costs more per run than these memcpy's. The message keeps its
    // type signature, n elements of the blocks' one predefined type, as the
    // datatype it replaces, so either side may take either path.
    auto plain = [&](const std::vector<BlockRef>& entries, bool sending) -> bool {
      long total = 0;
      int pieces = 0;
      bool contiguous = true;
      MPI_Datatype element = MPI_DATATYPE_NULL;
      for (BlockRef ref : entries) {
        const BlockDesc& block = buffers.at(ref);
        const long bytes = facts.bytes(block);
        if (bytes == 0) continue;
        MPI_Datatype leaf = facts.element(block);
        if (leaf == MPI_DATATYPE_NULL) {
          contiguous = false;
          leaf = facts.leaf(block);
        }
        if (leaf == MPI_DATATYPE_NULL || (element != MPI_DATATYPE_NULL && leaf != element)) return false;
        element = leaf;
        total += bytes;
        ++pieces;
      }
      if (pieces == 0 || ((pieces > 1 || !contiguous) && total > pack_limit)) return false;
      int element_size = 1;
      ISO_MPI_CHECK(MPI_Type_size(element, &element_size));
      if (element_size <= 0 || total % element_size != 0) return false;
      std::vector<Run> runs;
      for (BlockRef ref : entries) {
        const BlockDesc& block = buffers.at(ref);
        if (facts.bytes(block) == 0) continue;
        if (facts.element(block) != MPI_DATATYPE_NULL)
          append_run(runs, block.address, facts.bytes(block), region_of(ref));
        else if (!facts.append_runs(block, runs, region_of(ref)))
          return false;
      }
      PlainMessage message;
      message.sending = sending;
      message.peer = sending ? send_rank : recv_rank;
      message.round_index = round_index;
      message.elements = static_cast<int>(total / element_size);
      message.element = element;
      out.largest_message = std::max(out.largest_message, total);
      if (runs.size() == 1) {
        message.region = runs[0].region;
        message.offset = offset_in(runs[0].region, runs[0].address);
      } else {
        // Region numbers are 16 bits (a move stays 56 bytes: tens of
        // thousands are streamed per exchange); past that many images a
        // message takes the datatype path.
        if (out.image_bytes.size() >= 0xffffu - region_image) return false;
        const auto image = static_cast<std::uint16_t>(region_image + out.image_bytes.size());
        out.image_bytes.push_back(static_cast<std::size_t>(total));
        message.region = image;
        MPI_Aint at = 0;
        for (const Run& run : runs) {
          LocalMove m;
          m.raw = true, m.bytes = static_cast<std::size_t>(run.bytes);
          const MPI_Aint place = offset_in(run.region, run.address);
          m.from = sending ? place : at, m.from_region = sending ? run.region : image;
          m.to = sending ? at : place, m.to_region = sending ? image : run.region;
          (sending ? out.moves : out.unpacks).push_back(m);
          at += run.bytes;
        }
      }
      out.messages.push_back(message);
      return true;
    };
    // A message through derived datatypes relative to its regions (the
    // plan's, and so relocatable with it): one type for a message from one
    // region; the entries of one over several, typed per operation.
    auto typed = [&](const std::vector<BlockRef>& entries, bool sending, int peer) {
      long bytes = 0;
      std::uint16_t first_region = region_absolute;
      bool spans = false;
      for (BlockRef ref : entries) {
        const long block = facts.bytes(buffers.at(ref));
        if (block == 0) continue;
        if (bytes == 0) first_region = region_of(ref);
        spans = spans || region_of(ref) != first_region;
        bytes += block;
      }
      if (bytes == 0) return;
      out.largest_message = std::max(out.largest_message, bytes);
      PlainMessage message;
      message.sending = sending, message.peer = peer, message.round_index = round_index;
      message.elements = 1;
      std::vector<int> counts;
      std::vector<MPI_Aint> at;
      std::vector<MPI_Datatype> types;
      if (spans) {
        message.entry_begin = static_cast<int>(out.spanning.size());
        out.reuses_scratch = true;
      }
      for (BlockRef ref : entries) {
        const BlockDesc& block = buffers.at(ref);
        if (facts.bytes(block) == 0) continue;
        const std::uint16_t region = region_of(ref);
        if (!spans) {
          counts.push_back(block.count), at.push_back(block.address - region_base[region]);
          types.push_back(block.type);
          continue;
        }
        // The caller may free its types after init: the plan keeps duplicates.
        MPI_Datatype kept = block.type;
        if (!facts.named(block)) {
          auto known = std::find(kept_from.begin(), kept_from.end(), block.type);
          if (known == kept_from.end()) {
            out.kept_types.push_back(MPI_DATATYPE_NULL);
            ISO_MPI_CHECK(MPI_Type_dup(block.type, &out.kept_types.back()));
            kept_from.push_back(block.type);
            known = kept_from.end() - 1;
          }
          kept = out.kept_types[static_cast<std::size_t>(known - kept_from.begin())];
        }
        out.spanning.push_back({region, block.count, offset_in(region, block.address), kept});
      }
      if (spans) {
        message.region = region_absolute;
        message.entry_end = static_cast<int>(out.spanning.size());
      } else {
        out.parts.push_back({first_region, MPI_DATATYPE_NULL});
        commit_indexed(counts, at, types, out.parts.back().type);
        // Blocks described from MPI_BOTTOM (alltoallw with a null base) have
        // absolute displacements: they are posted from MPI_BOTTOM, not from
        // a null pointer that merely equals it in most MPI libraries.
        message.region = region_base[first_region] == 0 ? static_cast<std::uint16_t>(region_absolute) : first_region;
        message.element = out.parts.back().type;
      }
      out.messages.push_back(message);
    };
    if (recv_rank >= 0 && plain(recv, false)) recv_rank = -1;
    if (send_rank >= 0 && plain(send, true)) send_rank = -1;
    // Receive first so that the matching send finds it posted.
    if (recv_rank >= 0) typed(recv, false, recv_rank);
    if (send_rank >= 0) typed(send, true, send_rank);
  };
  // Entry i of `from` lands in entry i of `to`, both in this process, as
  // copies; false (nothing added) where a pair's sizes differ, so that MPI
  // reports the mismatch as for any message.
  std::size_t bounce_bytes = 0;
  std::size_t merge_floor = 0;  // moves before this index stay as they are
  // A move between layouts that flatten: one memcpy per pair of runs, in
  // type-map order on both sides (what MPI_Pack then MPI_Unpack would do,
  // in one pass and without the datatype engine).
  auto flat_move = [&](const BlockDesc& source, std::uint16_t source_region, const BlockDesc& target,
                       std::uint16_t target_region, std::size_t bytes) {
    std::vector<Run> from, to;
    if (!facts.append_runs(source, from, source_region) || !facts.append_runs(target, to, target_region))
      return false;
    std::size_t total_from = 0, total_to = 0;
    for (const Run& run : from) total_from += static_cast<std::size_t>(run.bytes);
    for (const Run& run : to) total_to += static_cast<std::size_t>(run.bytes);
    if (total_from != bytes || total_to != bytes) return false;
    std::size_t a = 0, b = 0;
    MPI_Aint done_a = 0, done_b = 0;  // bytes of from[a] / to[b] already paired
    while (a < from.size() && b < to.size()) {
      const MPI_Aint length = std::min(from[a].bytes - done_a, to[b].bytes - done_b);
      const MPI_Aint source_at = offset_in(source_region, from[a].address + done_a);
      const MPI_Aint target_at = offset_in(target_region, to[b].address + done_b);
      // Merge with the step's previous copy where both sides continue it.
      const LocalMove* last = out.moves.empty() ? nullptr : &out.moves.back();
      const bool merge = out.moves.size() > std::max(merge_floor, static_cast<std::size_t>(out.move_begin.back())) &&
                         last->raw && last->from_region == source_region && last->to_region == target_region &&
                         last->from + static_cast<MPI_Aint>(last->bytes) == source_at &&
                         last->to + static_cast<MPI_Aint>(last->bytes) == target_at;
      if (merge) {
        out.moves.back().bytes += static_cast<std::size_t>(length);
      } else {
        LocalMove m;
        m.raw = true, m.from = source_at, m.to = target_at, m.bytes = static_cast<std::size_t>(length);
        m.from_region = source_region, m.to_region = target_region;
        out.moves.push_back(m);
      }
      if ((done_a += length) == from[a].bytes) ++a, done_a = 0;
      if ((done_b += length) == to[b].bytes) ++b, done_b = 0;
    }
    return true;
  };
  auto add_moves = [&](const std::vector<BlockRef>& from, const std::vector<BlockRef>& to) {
    const std::size_t before = out.moves.size();
    merge_floor = before;
    for (std::size_t k = 0; k < from.size() && k < to.size(); ++k) {
      const BlockDesc& source = buffers.at(from[k]);
      const BlockDesc& target = buffers.at(to[k]);
      const long bytes = facts.bytes(source);
      if (bytes != facts.bytes(target) || from.size() != to.size()) {
        out.moves.resize(before);
        return false;
      }
      if (bytes == 0) continue;
      LocalMove m;
      m.from_region = region_of(from[k]), m.to_region = region_of(to[k]);
      m.from = offset_in(m.from_region, source.address), m.to = offset_in(m.to_region, target.address);
      m.bytes = static_cast<std::size_t>(bytes);
      m.raw = facts.element(source) != MPI_DATATYPE_NULL && facts.element(target) != MPI_DATATYPE_NULL;
      if (!m.raw && flat_move(source, m.from_region, target, m.to_region, static_cast<std::size_t>(bytes))) continue;
      if (!m.raw) {
        // Typed sides hold absolute addresses: this operation's alone.
        out.relocatable = false;
        // Our own types (the caller may free theirs after init), each side one
        // block placed relative to a non-null anchor, the operation itself:
        // blocks described from MPI_BOTTOM have address 0, and MPICH's
        // MPI_Pack/MPI_Unpack reject a null buffer.
        const MPI_Aint anchor = address_of(impl.get());
        auto anchored = [&](const BlockDesc& block, MPI_Datatype& type) {
          const MPI_Aint displacement = block.address - anchor;
          ISO_MPI_CHECK(MPI_Type_create_hindexed(1, &block.count, &displacement, block.type, &type));
          impl->types.push_back(type);
          ISO_MPI_CHECK(MPI_Type_commit(&type));
        };
        // A contiguous side keeps its address and no type (see move()).
        const bool source_flat = facts.element(source) != MPI_DATATYPE_NULL;
        const bool target_flat = facts.element(target) != MPI_DATATYPE_NULL;
        if (!source_flat) anchored(source, m.from_type), m.from = anchor, m.from_count = 1;
        if (!target_flat) anchored(target, m.to_type), m.to = anchor, m.to_count = 1;
        if (!source_flat) m.from_region = region_absolute;
        if (!target_flat) m.to_region = region_absolute;
        if (!source_flat && !target_flat) {
          int packed = 0;
          ISO_MPI_CHECK(MPI_Pack_size(source.count, source.type, impl->comm, &packed));
          bounce_bytes = std::max(bounce_bytes, static_cast<std::size_t>(packed));
        }
      }
      out.moves.push_back(m);
    }
    return true;
  };
  const int self = neighborhood.rank();
  // About one move per entry of a local round: one allocation, not a
  // doubling series of fresh pages.
  std::size_t entries = plan.copies.size();
  for (const Round& round : plan.rounds) entries += round.send.size();
  out.moves.reserve(entries);
  const std::vector<BlockRef> none;
  std::vector<BlockRef> merged;
  StepMessages posted;
  for (const ExecutionStep& step : execution_steps(plan, ports, self)) {
    out.step_begin.push_back(static_cast<int>(out.messages.size()));
    out.move_begin.push_back(static_cast<int>(out.moves.size()));
    out.unpack_begin.push_back(static_cast<int>(out.unpacks.size()));
    for (int r = step.first; r < step.last; ++r) {
      const Round& round = plan.rounds[static_cast<std::size_t>(r)];
      if (is_local_round(round, self) && !add_moves(round.send, round.recv))
        add_messages(round.send, round.send_rank, round.recv, round.recv_rank, round.index);
    }
    // One message per partner and direction (step_messages): the rounds'
    // entries in round order, which is the order the partner lists them in.
    step_messages(plan, step, self, posted);
    for (const StepMessage& message : posted.messages) {
      const std::vector<BlockRef>& listed = step_message_entries(plan, posted, message, merged);
      if (message.sending)
        add_messages(listed, message.peer, none, -1, message.round_index);
      else
        add_messages(none, -1, listed, message.peer, message.round_index);
    }
    if (step.copies) {
      std::vector<BlockRef> from, to;
      for (const LocalCopy& copy : plan.copies) from.push_back(copy.from), to.push_back(copy.to);
      if (!add_moves(from, to)) add_messages(from, self, to, self, plan.num_global_rounds);
    }
    // Packs into send images first, since the step's messages carry them;
    // then the copies to itself, made while the messages travel (no message
    // of the step touches their slots: execution_steps). At 8^3 on 2 ranks
    // the 8 blocks a rank sends itself took ~0.5 us before its one message.
    const auto step_moves = out.moves.begin() + out.move_begin.back();
    const auto after = std::stable_partition(step_moves, out.moves.end(),
                                             [](const LocalMove& m) { return m.to_region >= region_image; });
    out.move_begin.push_back(static_cast<int>(after - out.moves.begin()));
    // A step with nothing to do is left out.
    if (out.step_begin.back() == static_cast<int>(out.messages.size()) &&
        out.move_begin[out.move_begin.size() - 2] == static_cast<int>(out.moves.size())) {
      out.step_begin.pop_back();
      out.move_begin.resize(out.move_begin.size() - 2);
      out.unpack_begin.pop_back();
    }
  }
  impl->bounce.resize(bounce_bytes);
  out.move_begin.push_back(static_cast<int>(out.moves.size()));
  out.unpack_begin.push_back(static_cast<int>(out.unpacks.size()));
  out.step_begin.push_back(static_cast<int>(out.messages.size()));
  // Equally spaced raw copies of one size within a step become one strided
  // move: at 128^3 a 27-point halo's self faces were 34 000 copies of one or
  // two doubles. Order within the step is kept; a step's copies never overlap.
  // In place: the kept moves never run ahead of the ones read (a second
  // list of 13 000 moves at d4 r3 was 700 KiB of fresh pages per build).
  auto stride = [](std::vector<LocalMove>& moves, std::vector<int>& begin) {
    std::size_t kept = 0;
    std::vector<int> starts(begin.size());
    for (std::size_t step = 0; step + 1 < begin.size(); ++step) {
      starts[step] = static_cast<int>(kept);
      for (int k = begin[step]; k < begin[step + 1]; ++k) {
        const LocalMove m = moves[static_cast<std::size_t>(k)];
        if (kept > static_cast<std::size_t>(starts[step])) {
          LocalMove& last = moves[kept - 1];
          const MPI_Aint from_step = m.from - (last.from + (last.repeat - 1) * last.from_stride);
          const MPI_Aint to_step = m.to - (last.to + (last.repeat - 1) * last.to_stride);
          if (last.raw && m.raw && last.bytes == m.bytes && last.from_region == m.from_region &&
              last.to_region == m.to_region && last.repeat < (1 << 30) &&
              (last.repeat == 1 || (from_step == last.from_stride && to_step == last.to_stride))) {
            last.from_stride = from_step, last.to_stride = to_step;
            ++last.repeat;
            continue;
          }
        }
        moves[kept++] = m;
      }
    }
    starts.back() = static_cast<int>(kept);
    moves.resize(kept);
    begin = std::move(starts);
  };
  stride(out.moves, out.move_begin);
  stride(out.unpacks, out.unpack_begin);
  if (key.usable && out.relocatable) store_plan(key, built);
  instantiate(*impl, std::move(built), buffers, tag_base, posting);
  return impl;
}

}  // namespace iso::detail
