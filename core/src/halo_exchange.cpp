#include "isostencil/core/halo_exchange.hpp"

#include "iso/error.hpp"

#include <Kokkos_Core.hpp>

namespace isostencil::core {

HaloExchange::HaloExchange(std::shared_ptr<const Decomposition> decomposition,
                           std::shared_ptr<const HaloPattern> pattern, MPI_Datatype element,
                           std::vector<void*> fields, std::vector<std::any> keep_alive,
                           bool host_accessible)
    : decomposition_(std::move(decomposition)),
      keep_alive_(std::move(keep_alive)),
      host_accessible_(host_accessible),
      exchange_(std::move(pattern), element, std::move(fields)) {}

void HaloExchange::start() {
  // Device kernels may still be writing the interior; MPI must see their results.
  Kokkos::fence();
  exchange_.start();
}

void HaloExchange::require_host_access(const char* what) const {
  if (!host_accessible_)
    throw iso::Error(std::string("isostencil::core::HaloExchange::") + what +
                     ": the fields live in memory the host cannot access; the reference "
                     "exchange packs on the host");
}

void HaloExchange::run_naive() {
  require_host_access("run_naive");
  Kokkos::fence();
  exchange_.run_naive();
}

iso::HaloValidation HaloExchange::validate() {
  require_host_access("validate");
  Kokkos::fence();
  return exchange_.validate();
}

}  // namespace isostencil::core
