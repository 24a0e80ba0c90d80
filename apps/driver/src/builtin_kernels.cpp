// register_builtin_kernels: the driver's kernels go through the same
// registration as any program's (driver.hpp), first, so that jacobi is the
// default kernel.name; then the generic deck keys are described in terms of
// these kernels, which is how docs/deck-keys.md reads.
#include "builtin_kernels.hpp"

#include "isostencil/deck/schema.hpp"

namespace isostencil::driver {

void register_builtin_kernels() {
  static bool registered = false;
  if (registered) return;
  registered = true;  // before registering: register_kernel calls back here
  register_kernel(jacobi_kernel());
  register_kernel(life_kernel());
  register_kernel(advection_kernel());

  // Arguments: key, default, allowed, meaning ("" keeps the deck library's text).
  deck::describe_deck_key("stencil.shape", "\"auto\" (jacobi: star, life: box, advection: upwind)", "", "");
  deck::describe_deck_key("stencil.radius", "", "1 to 8 (life: 1)", "");
  deck::describe_deck_key("stencil.signs",
                          "advection: the side velocity comes from (-sign(velocity)); otherwise -1", "", "");
  deck::describe_deck_key("stencil.weights",
                          "star: the Laplacian (centre -2d, neighbours 1); box: the compact (Mehrstellen) "
                          "Laplacian; required for upwind and offsets and for radius > 1",
                          "one per offset in stencil order (star: centre, then -r..r per dimension; box: "
                          "row-major), the centre's < 0",
                          "jacobi: the operator L u(x) = sum_c w_c u(x + c) of -L u = f; a sweep sets "
                          "u(x) = (f + sum_{c != 0} w_c u(x + c)) / (-w_0)");
  deck::describe_deck_key("kernel.name", "", "",
                          "the kernel: Jacobi iteration, Life-like automaton, upwind advection");
  deck::describe_deck_key("init.type", "\"auto\" (jacobi: constant, life: random, advection: gaussian)", "",
                          "initial condition; every one is a function of the global index, so it does not "
                          "depend on the decomposition (pattern: life only; gaussian: jacobi, advection)");
  deck::describe_deck_key("init.value", "", "life: 0 or 1", "");
  deck::describe_deck_key("init.density", "", "", "random (life): probability that a cell is alive");
  deck::describe_deck_key("init.low", "", "", "random (jacobi, advection): values uniform in [low, high)");
  deck::describe_deck_key("init.high", "", "", "random (jacobi, advection): see low");
  deck::describe_deck_key("init.pattern", "", "an RLE file",
                          "pattern: Life pattern file, relative to the deck's directory");
  deck::describe_deck_key("run.tolerance", "", "",
                          "jacobi: stop once the residual max|f + L u| is at most this (checked every "
                          "residual_every steps)");
  deck::describe_deck_key("run.residual_every", "", "",
                          "compute the residual (jacobi), live cells (life) or mass (advection) and print a "
                          "progress line every N steps");
}

}  // namespace isostencil::driver
