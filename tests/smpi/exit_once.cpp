// Linked into iso-bench under SMPI only. With smpi/privatization:mmap (the
// paper mode at thousands of ranks, docs/simulating.md#costs-of-a-simulation)
// every simulated rank runs the program's function-local static initializers
// in its own copy of the data segment, and each registers that static's
// destructor on one and the same address: the process' exit would run it once
// a rank (a double free). The simulation is one process that ends right
// after, and no static of iso-bench flushes anything at exit, so the
// program's own registrations are dropped. Hidden: smpicxx links the program
// as a shared object, and only a hidden definition binds its own calls here
// (libraries keep the C library's).
extern "C" __attribute__((visibility("hidden"))) int __cxa_atexit(void (*)(void*), void*, void*) { return 0; }
