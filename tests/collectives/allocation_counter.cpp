// Replacement of the global allocation functions that counts allocations.
// Only the main thread allocates while a count is being compared; the counter
// is atomic anyway because gtest and the watchdog may allocate on other threads.
#include "allocation_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<long> allocation_count{0};
thread_local int uncounted_depth = 0;

void* allocate(std::size_t size) {
  if (uncounted_depth == 0) allocation_count.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  if (void* p = std::malloc(size)) return p;
  throw std::bad_alloc();
}
}  // namespace

namespace iso_collectives_test {
long allocations() {
  return allocation_count.load(std::memory_order_relaxed);
}
UncountedAllocations::UncountedAllocations() {
  ++uncounted_depth;
}
UncountedAllocations::~UncountedAllocations() {
  --uncounted_depth;
}
}  // namespace iso_collectives_test

void* operator new(std::size_t size) {
  return allocate(size);
}
void* operator new[](std::size_t size) {
  return allocate(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
