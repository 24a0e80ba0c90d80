// The cost model's pricing of schedules (docs/design/cost-model.md): how an
// operation groups rounds into steps and what a step, a schedule and the MPI
// library's own collective cost. Figures and their files: cost_model.cpp.
#include "iso/cost_model.hpp"

#include "cost_model_internal.hpp"
#include "iso/error.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace iso {

namespace {

long entry_bytes(BlockRef ref, const BlockBytes& bytes) {
  const std::vector<long>& sizes = ref.buffer == Buffer::send ? bytes.send : bytes.recv;
  return ref.block < static_cast<int>(sizes.size()) ? sizes[ref.block] : 0;
}

long sum_bytes(const std::vector<BlockRef>& entries, const BlockBytes& bytes) {
  long total = 0;
  for (BlockRef ref : entries) total += entry_bytes(ref, bytes);
  return total;
}

}  // namespace

double detail::predict_seconds(const CostModel& model, const Schedule& schedule, const BlockBytes& bytes) {
  double seconds = 0;
  for (const Round& round : schedule.rounds) {
    const long moved = std::max(sum_bytes(round.send, bytes), sum_bytes(round.recv, bytes));
    seconds += model.message_seconds(static_cast<double>(moved)) +
               model.gamma * static_cast<double>(round.send.size() + round.recv.size());
  }
  for (const LocalCopy& copy : schedule.copies)
    seconds += model.beta * static_cast<double>(entry_bytes(copy.to, bytes)) + 2 * model.gamma;
  return seconds;
}

double predict_native_seconds(const CostModel& model, int neighbors, const BlockBytes& bytes) {
  // Each block is its own message, in the regime of its size; the start-up
  // that counts is the largest one.
  // Every message but the one whose start-up counts adds delta (eager) or
  // delta_large (rendezvous), per direction.
  double start = model.alpha, sent = 0, received = 0, sent_extra = 0, received_extra = 0;
  bool large = false;
  auto add = [&](long b, double& total, double& extra) {
    const double size = static_cast<double>(b);
    const double whole = model.message_seconds(size);
    const double startup = model.rendezvous(size) ? model.alpha_large : model.alpha;
    if (model.rendezvous(size)) large = true;
    start = std::max(start, startup);
    total += whole - startup;
    extra += model.further_message_seconds(size);
  };
  for (long b : bytes.send) add(b, sent, sent_extra);
  if (bytes.send.size() == 1) sent *= neighbors, sent_extra *= neighbors;  // allgather: one block to every neighbor
  for (long b : bytes.recv) add(b, received, received_extra);
  const double first = large && model.delta_large > 0 ? model.delta_large : model.delta;
  const double further = neighbors > 0 ? std::max(0.0, std::max(sent_extra, received_extra) - first) : 0.0;
  return start + further + std::max(sent, received) + model.gamma * 2.0 * neighbors;
}

std::vector<ExecutionStep> execution_steps(const Schedule& schedule, int ports, int self_rank) {
  if (ports < 0) throw Error("iso::execution_steps: ports is " + std::to_string(ports) + " (0: no limit, or >= 1)");
  // Slot flags per (buffer, block): read or written by the current step.
  const std::size_t s = static_cast<std::size_t>(std::max(schedule.num_blocks, 1));
  std::vector<char> reads(4 * s, 0), writes(4 * s, 0);
  std::vector<std::size_t> touched;
  auto slot = [s](BlockRef ref) { return static_cast<std::size_t>(ref.buffer) * s + static_cast<std::size_t>(ref.block); };
  auto conflicts = [&](const std::vector<BlockRef>& read, const std::vector<BlockRef>& written) {
    for (BlockRef ref : read)
      if (writes[slot(ref)]) return true;
    for (BlockRef ref : written)
      if (reads[slot(ref)] || writes[slot(ref)]) return true;
    return false;
  };
  auto mark = [&](const std::vector<BlockRef>& read, const std::vector<BlockRef>& written) {
    for (BlockRef ref : read) reads[slot(ref)] = 1, touched.push_back(slot(ref));
    for (BlockRef ref : written) writes[slot(ref)] = 1, touched.push_back(slot(ref));
  };
  auto clear = [&] {
    for (std::size_t k : touched) reads[k] = writes[k] = 0;
    touched.clear();
  };
  static const std::vector<BlockRef> none;
  std::vector<ExecutionStep> steps;
  int sends = 0, receives = 0;  // messages of the current step
  const int rounds = static_cast<int>(schedule.rounds.size());
  for (int r = 0; r < rounds; ++r) {
    const Round& round = schedule.rounds[static_cast<std::size_t>(r)];
    const std::vector<BlockRef>& read = round.send_rank >= 0 ? round.send : none;
    const std::vector<BlockRef>& written = round.recv_rank >= 0 ? round.recv : none;
    const bool local = is_local_round(round, self_rank);
    const int round_sends = !local && round.send_rank >= 0 && !round.send.empty() ? 1 : 0;
    const int round_receives = !local && round.recv_rank >= 0 && !round.recv.empty() ? 1 : 0;
    const bool full = ports > 0 && (sends + round_sends > ports || receives + round_receives > ports);
    if (steps.empty() || full || conflicts(read, written)) {
      clear();
      steps.push_back({r, r, false});
      sends = receives = 0;
    }
    mark(read, written);
    sends += round_sends;
    receives += round_receives;
    steps.back().last = r + 1;
  }
  if (!schedule.copies.empty()) {
    std::vector<BlockRef> from, to;
    for (const LocalCopy& copy : schedule.copies) from.push_back(copy.from), to.push_back(copy.to);
    if (steps.empty() || conflicts(from, to)) steps.push_back({rounds, rounds, false});
    steps.back().copies = true;
  }
  return steps;
}

double predict_execution_seconds(const CostModel& model, const Schedule& schedule, const BlockBytes& bytes,
                                 int self_rank, int ports) {
  double seconds = 0;
  auto copy_seconds = [&](BlockRef to) {
    return model.copy_seconds(static_cast<double>(entry_bytes(to, bytes))) + 2 * model.gamma;
  };
  // One direction of a step: the bytes of the messages that leave the node
  // and of those that stay on it (two routes: they flow at once, the larger
  // counts), the further messages' costs.
  struct Direction {
    double remote = 0, node = 0, extra = 0;
    long count = 0;
    double bytes() const { return std::max(remote, node); }
  };
  std::vector<BlockRef> merged;
  StepMessages posted;
  for (const ExecutionStep& step : execution_steps(schedule, ports, self_rank)) {
    double start = 0, local = 0;
    Direction sent, received;
    double first = model.delta;  // what the message whose start-up counts would add as a further one
    long entries = 0;
    auto message = [&](const std::vector<BlockRef>& refs, int peer, Direction& way) {
      const long b = sum_bytes(refs, bytes);
      if (b == 0) return;
      const double size = static_cast<double>(b);
      const long blocks = static_cast<long>(refs.size());
      const bool node = model.same_node(self_rank, peer);
      const double startup = node ? model.node_startup_seconds(size) : model.startup_seconds(size, blocks);
      const double transfer = (node ? model.node_message_seconds(size) : model.message_seconds(size, blocks)) - startup;
      if (startup > start) start = startup, first = model.further_message_seconds(size, blocks);
      (node ? way.node : way.remote) += transfer;
      way.extra += model.further_message_seconds(size, blocks);
      ++way.count;
      entries += blocks;
    };
    for (int r = step.first; r < step.last; ++r) {
      const Round& round = schedule.rounds[static_cast<std::size_t>(r)];
      if (is_local_round(round, self_rank))
        for (BlockRef to : round.recv) local += copy_seconds(to);
    }
    // Priced as posted: the rounds of one partner in one message.
    step_messages(schedule, step, self_rank, posted);
    for (const StepMessage& one : posted.messages)
      message(step_message_entries(schedule, posted, one, merged), one.peer, one.sending ? sent : received);
    if (step.copies)
      for (const LocalCopy& copy : schedule.copies) local += copy_seconds(copy.to);
    // The message whose start-up counts adds no delta of its own.
    const long most = std::max(sent.count, received.count);
    const double further = most > 0 ? std::max(0.0, std::max(sent.extra, received.extra) - first) : 0.0;
    const double transfer = std::max(sent.bytes(), received.bytes());
    if (most > 0 && model.delta_post > 0) {
      // Posting the further messages (delta_post each) runs while the first
      // one travels (its latency: the start-up beyond what it would add as a
      // further one) and while the bytes already posted flow; completing
      // them does not: messages that share a link arrive together, at its
      // end.
      const double posting = static_cast<double>(most - 1) * model.delta_post;
      const double latency = std::max(0.0, start - first);
      seconds += start + further + std::max(transfer - posting, -latency);
    } else {
      if (most > 0) seconds += start + further;
      seconds += transfer;
    }
    seconds += model.gamma * static_cast<double>(entries) + local;
  }
  return seconds;
}

}  // namespace iso
