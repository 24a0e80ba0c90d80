// isostencil: the project's driver (the command line lives in the driver
// library, driver_main.cpp, which programs with their own kernels reuse).
#include "isostencil/driver/driver.hpp"

int main(int argc, char** argv) { return isostencil::driver::main(argc, argv); }
