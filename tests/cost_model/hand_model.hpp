// The hand model of the cost model's hand-worked checks (tests/cost_model):
// round figures whose predictions are worked out in the tests' comments.
#pragma once

#include "iso/collectives.hpp"
#include "iso/cost_model.hpp"
#include "iso/schedule.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace iso_hand {

inline constexpr double a = 1e-6, b = 1e-9, g = 1e-7, dl = 5e-7;
inline iso::CostModel hand_model() {
  iso::CostModel model;
  model.alpha = a;
  model.beta = b;
  model.gamma = g;
  model.delta = dl;
  return model;
}

inline iso::BlockBytes uniform_bytes(int s, long bytes, iso::Collective collective) {
  iso::BlockBytes out;
  out.send.assign(collective == iso::Collective::alltoall ? static_cast<std::size_t>(s) : 1u, bytes);
  out.recv.assign(static_cast<std::size_t>(s), bytes);
  return out;
}

inline void expect_close(double got, double want, const char* what) {
  EXPECT_NEAR(got, want, 1e-9 * want) << what;
}

}  // namespace iso_hand
