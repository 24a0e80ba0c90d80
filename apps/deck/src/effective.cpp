// The effective deck: every key with its resolved value, as TOML that parses
// back to an equal deck (floats round-trip exactly). Outputs and checkpoints
// store it; a restart reads it back.
#include "isostencil/deck/deck.hpp"
#include "isostencil/deck/kernel.hpp"

#include "text.hpp"

#include <algorithm>
#include <sstream>

namespace isostencil::deck {

using detail::quoted;

std::string Deck::effective_toml() const {
  // A key restricted to some kernels is written when this deck's kernel takes it.
  const auto takes = [&](const std::string& dotted) {
    for (const DeckKey& entry : deck_schema())
      if (entry.dotted() == dotted)
        for (const auto& [condition, values] : entry.applies)
          if (condition == "kernel.name")
            return std::find(values.begin(), values.end(), kernel.name) != values.end();
    return false;
  };
  std::ostringstream out;
  const auto list = [](const auto& values, auto format) {
    std::string body = "[";
    for (std::size_t i = 0; i < values.size(); ++i) body += (i ? ", " : "") + format(values[i]);
    return body + "]";
  };
  const auto integer = [](long v) { return std::to_string(v); };
  const auto real = [](double v) { return deck_float(v); };
  const auto boolean = [](bool v) { return std::string(v ? "true" : "false"); };
  out << "# effective deck (every key resolved) of " << source << "\n";
  out << "[grid]\ndims = " << grid.dims << "\nextent = " << list(grid.extent, integer)
      << "\nperiodic = " << list(grid.periodic, boolean) << "\nprocs = "
      << list(std::vector<long>(grid.procs.begin(), grid.procs.end()), integer) << "\n";
  out << "\n[stencil]\nshape = " << quoted(stencil.shape) << "\n";
  if (stencil.shape != "offsets") out << "radius = " << stencil.radius << "\n";
  if (stencil.shape == "upwind")
    out << "signs = " << list(std::vector<long>(stencil.signs.begin(), stencil.signs.end()), integer)
        << "\n";
  if (stencil.shape == "offsets") {
    out << "offsets = [";
    for (std::size_t i = 0; i < stencil.offsets.size(); ++i)
      out << (i ? ", " : "")
          << list(std::vector<long>(stencil.offsets[i].begin(), stencil.offsets[i].end()), integer);
    out << "]\n";
  }
  const DeckKernel* registered = find_deck_kernel(kernel.name);
  if (takes("stencil.weights") && !stencil.weights.empty())
    out << "weights = " << list(stencil.weights, real) << "\n";
  out << "\n[kernel]\nname = " << quoted(kernel.name) << "\n";
  if (registered)
    for (const DeckKernelParameter& parameter : registered->parameters) {
      const auto found = kernel.parameters.find(parameter.key);
      if (found == kernel.parameters.end()) continue;
      const DeckValue& v = found->second;
      out << parameter.key << " = ";
      switch (parameter.kind) {
        case DeckValueKind::integer: out << v.integer; break;
        case DeckValueKind::floating: out << real(v.floating); break;
        case DeckValueKind::boolean: out << boolean(v.boolean); break;
        case DeckValueKind::string: out << quoted(v.string); break;
        case DeckValueKind::integers: out << list(v.integers, integer); break;
        case DeckValueKind::floats: out << list(v.floats, real); break;
        case DeckValueKind::booleans: out << list(v.booleans, boolean); break;
        case DeckValueKind::offsets:  // refused at registration
        case DeckValueKind::integer_or_auto: break;
      }
      out << "\n";
    }
  out << "\n[init]\ntype = " << quoted(init.type) << "\n";
  if (init.type == "constant") out << "value = " << real(init.value) << "\n";
  if (init.type == "random") {
    if (takes("init.density")) out << "density = " << real(init.density) << "\n";
    if (takes("init.low")) out << "low = " << real(init.low) << "\n";
    if (takes("init.high")) out << "high = " << real(init.high) << "\n";
    out << "seed = " << init.seed << "\n";
  }
  if (init.type == "pattern") {
    out << "pattern = " << quoted(resolve(init.pattern)) << "\n";
    if (!init.offset.empty()) out << "offset = " << list(init.offset, integer) << "\n";
  }
  if (init.type == "gaussian")
    out << "center = " << list(init.center, real) << "\nwidth = " << real(init.width)
        << "\namplitude = " << real(init.amplitude) << "\n";
  out << "\n[run]\nsteps = " << run.steps << "\n";
  if (takes("run.tolerance")) out << "tolerance = " << real(run.tolerance) << "\n";
  out << "residual_every = " << run.residual_every
      << "\ncheck_finite_every = " << run.check_finite_every
      << "\noverlap = " << boolean(run.overlap) << "\n";
  out << "\n[halo]\nalgorithm = " << quoted(halo.algorithm)
      << "\nvalidate_every = " << halo.validate_every << "\nports = " << halo.ports
      << "\ntransport = " << quoted(halo.transport)
      << "\ndepth = " << (halo.depth_auto ? quoted("auto") : std::to_string(halo.depth))
      << "\ngpu_aware_mpi = " << boolean(halo.gpu_aware_mpi) << "\n";
  out << "\n[output]\ndir = " << quoted(output.dir) << "\nname = " << quoted(output.name)
      << "\nformat = " << quoted(output.format) << "\n";
  out << "every = " << output.every << "\n";
  out << "checkpoint_every = " << output.checkpoint_every << "\n";
  return out.str();
}

}  // namespace isostencil::deck
