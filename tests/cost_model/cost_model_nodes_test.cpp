// The cost model's route classes of nodes and its posting overlap
// (docs/design/cost-model.md#nodes, #overlap): predictions checked against
// hand computations on the hand model of hand_model.hpp.
#include "hand_model.hpp"

#include "iso/cost_model.hpp"
#include "iso/schedule.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

using namespace iso_hand;

// Two route classes (ranks_per_node, alpha_node, beta_node) by hand: 2-D
// Moore on a 4x4 torus, rank 6 = (1, 2), nodes of 8 ranks (rows 0-1 and
// 2-3). Its partners 1, 2, 3, 5, 7 share its node, 9, 10, 11 do not. Hand
// model plus alpha_node 4e-7, beta_node 2e-10.
TEST(CostModelPredict, NodeRouteClassesByHand) {
  const iso::OffsetList moore = iso::OffsetList::moore(2, 1);
  const iso::CartGeometry torus{{4, 4}, {true, true}};
  const std::vector<int> coords{1, 2};
  iso::CostModel model = hand_model();
  model.ranks_per_node = 8, model.alpha_node = 4e-7, model.beta_node = 2e-10;
  auto steps = [&](const iso::CostModel& m, iso::Algorithm algorithm, long block) {
    return iso::predict_execution_seconds(
        m, iso::build_schedule(moore, torus, coords.data(), algorithm, iso::Collective::alltoall),
        uniform_bytes(8, block, iso::Collective::alltoall), 6);
  };
  EXPECT_TRUE(model.same_node(6, 1));
  EXPECT_FALSE(model.same_node(6, 9));
  // Linear, 8 B: one step of 8 messages each way, the off-node start-up a,
  // 7 dl; bytes: off the node 3 * 8 b = 2.4e-8, on it 5 * 8 * 2e-10 = 8e-9,
  // the larger counts; 16 g: 1e-6 + 3.5e-6 + 2.4e-8 + 1.6e-6 = 6.124e-6
  // (one class: 6.164e-6).
  expect_close(steps(model, iso::Algorithm::linear, 8), 6.124e-6, "linear, two classes");
  // Torus, 8 B: the step of dimension 0 (partners 2 on, 10 off the node, a
  // message of 3 blocks, 24 B, each): a + dl + 24 b + 12 g = 2.724e-6; the
  // step of dimension 1 (5 and 7, both on it): 4e-7 + dl + 2 * 24 * 2e-10
  // + 12 g = 2.1096e-6; 4.8336e-6.
  expect_close(steps(model, iso::Algorithm::torus, 8), 4.8336e-6, "torus, two classes");
  // Rendezvous (limit 4096, alpha_large 4e-6, beta_large 5e-10; torus
  // messages of 6144 B): on the node the start-up is 4e-6 - a + 4e-7 =
  // 3.4e-6. Dimension 0: 4e-6 + dl + max(6144 * 5e-10, 6144 * 2e-10) + 12 g =
  // 8.772e-6; dimension 1: 3.4e-6 + dl + 2 * 6144 * 2e-10 + 12 g = 7.5576e-6.
  iso::CostModel regimes = model;
  regimes.eager_limit = 4096, regimes.alpha_large = 4e-6, regimes.beta_large = 5e-10;
  expect_close(steps(regimes, iso::Algorithm::torus, 2048), 8.772e-6 + 7.5576e-6, "torus, rendezvous, two classes");
  // One rank a node: no message stays on it, the one-class prediction.
  model.ranks_per_node = 1;
  expect_close(steps(model, iso::Algorithm::linear, 8), 6.164e-6, "one rank a node");
  model.ranks_per_node = 0;
  expect_close(steps(model, iso::Algorithm::torus, 8), 5.496e-6, "no nodes");
}

// delta_post: posting the further messages (delta_post each) runs while the
// first one travels (its latency a - dl = 5e-7) and while the bytes flow:
// a step costs start-up + further + max(bytes - posting, -latency).
// Linear on the 4x4 torus, hand model (one regime), 8 messages each way:
// a + 7 dl + 16 g = 6.1e-6 besides the bytes.
TEST(CostModelPredict, PostingOverlapsTransferByHand) {
  const iso::OffsetList moore = iso::OffsetList::moore(2, 1);
  const iso::CartGeometry torus{{4, 4}, {true, true}};
  const std::vector<int> coords{1, 2};
  iso::CostModel model = hand_model();
  auto linear = [&](long block) {
    return iso::predict_execution_seconds(
        model, iso::build_schedule(moore, torus, coords.data(), iso::Algorithm::linear, iso::Collective::alltoall),
        uniform_bytes(8, block, iso::Collective::alltoall), 6);
  };
  const double fixed = a + 7 * dl + 16 * g;
  // 2048 B blocks: bytes 8 * 2048 b = 1.6384e-5 a direction.
  expect_close(linear(2048), fixed + 1.6384e-5, "no overlap");
  // delta_post 4e-7: posting 7 * 4e-7 = 2.8e-6 of the bytes overlap.
  model.delta_post = 4e-7;
  expect_close(linear(2048), fixed + 1.6384e-5 - 2.8e-6, "posting overlaps the bytes");
  // 8 B blocks: bytes 6.4e-8; the posting hides them and the latency, at
  // most all 5e-7 of it: fixed - 5e-7.
  expect_close(linear(8), fixed - 5e-7, "latency hidden");
  // delta_post 5e-8: posting 3.5e-7 hides the bytes and part of the
  // latency: fixed + 6.4e-8 - 3.5e-7.
  model.delta_post = 5e-8;
  expect_close(linear(8), fixed + 6.4e-8 - 3.5e-7, "latency partly hidden");
  // delta_post 4e-6: posting 2.8e-5 outlasts the bytes; no more than the
  // latency comes off: fixed - 5e-7.
  model.delta_post = 4e-6;
  expect_close(linear(2048), fixed - 5e-7, "at most the latency comes off");
  // One message each way (2 ranks in a periodic 1-D ring merge both
  // directions): nothing overlaps, a + 4096 b + 4 g.
  const iso::OffsetList ring = iso::OffsetList::moore(1, 1);
  const iso::CartGeometry two{{2}, {true}};
  const std::vector<int> at{0};
  expect_close(iso::predict_execution_seconds(
                   model, iso::build_schedule(ring, two, at.data(), iso::Algorithm::linear, iso::Collective::alltoall),
                   uniform_bytes(2, 2048, iso::Collective::alltoall), 0),
               a + 4096 * b + 4 * g, "one message");
}

}  // namespace
