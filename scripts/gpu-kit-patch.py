#!/usr/bin/env python3
"""Applies to a Kokkos 4.x source tree the changes CUDA 13 needs (the list in
docs/building-kokkos.md, "Kokkos 4.6.01 and CUDA 13"), each guarded by
CUDART_VERSION so the tree still builds with CUDA 12. A tree that already has a
change (a newer Kokkos, or this script run before) is left as it is; a call
that is neither in its old form nor changed is an error, so a Kokkos whose code
moved is reported instead of shipped half-patched.

    scripts/gpu-kit-patch.py KOKKOS_TREE
"""
import pathlib
import re
import sys

tree = pathlib.Path(sys.argv[1])
inst = tree / "core/src/Cuda/Kokkos_Cuda_Instance.hpp"
text = inst.read_text()

CHANGES = [
    (  # cudaGraphAddDependencies gained an edge-data argument
        "cudaGraphAddDependencies",
        r"return cudaGraphAddDependencies\(graph, from, to, numDependencies\);",
        """
#if CUDART_VERSION >= 13000
    return cudaGraphAddDependencies(graph, from, to, nullptr, numDependencies);
#else
    return cudaGraphAddDependencies(graph, from, to, numDependencies);
#endif""",
    ),
    (  # a cudaMemLocation instead of a device number
        "cudaMemAdvise",
        r"return cudaMemAdvise\(devPtr, count, advice, device\);",
        """
#if CUDART_VERSION >= 13000
    cudaMemLocation location{};
    location.type = cudaMemLocationTypeDevice;
    location.id   = device;
    return cudaMemAdvise(devPtr, count, advice, location);
#else
    return cudaMemAdvise(devPtr, count, advice, device);
#endif""",
    ),
    (  # a cudaMemLocation and a flags argument before the stream
        "cudaMemPrefetchAsync",
        r"return cudaMemPrefetchAsync\(devPtr, count, dstDevice,\s*get_input_stream\(stream\)\);",
        """
#if CUDART_VERSION >= 13000
    cudaMemLocation location{};
    location.type = cudaMemLocationTypeDevice;
    location.id   = dstDevice;
    return cudaMemPrefetchAsync(devPtr, count, location, 0,
                                get_input_stream(stream));
#else
    return cudaMemPrefetchAsync(devPtr, count, dstDevice,
                                get_input_stream(stream));
#endif""",
    ),
]

# The CUDA 13 form of each call (a newer Kokkos has it, or this script ran before)
MARKERS = {
    "cudaGraphAddDependencies": "cudaGraphAddDependencies(graph, from, to, nullptr,",
    "cudaMemAdvise": "cudaMemAdvise(devPtr, count, advice, location)",
    "cudaMemPrefetchAsync": "cudaMemPrefetchAsync(devPtr, count, location, 0,",
}
done = []
for name, old, new in CHANGES:
    if MARKERS[name] in text:
        done.append(f"{name}: already changed")
        continue
    text, n = re.subn(old, lambda _m, new=new: new, text)
    if n != 1:
        sys.exit(f"gpu-kit-patch: {inst}: the {name} call is not in the form Kokkos 4.6 has "
                 f"({n} matches); adapt it by hand (docs/building-kokkos.md)")
    done.append(f"{name}: changed")
inst.write_text(text)

# nvcc 13 refuses nvcc_wrapper's default sm_70, which CMake's compiler check
# uses before Kokkos adds Kokkos_ARCH_*; the kit is for Hopper (sm_90).
wrapper = tree / "bin/nvcc_wrapper"
w = wrapper.read_text()
w2, n = re.subn(r'^default_arch="sm_[0-9]+"', 'default_arch="sm_90"', w, count=1, flags=re.M)
if n != 1:
    sys.exit(f"gpu-kit-patch: {wrapper}: no default_arch line")
wrapper.write_text(w2)
done.append("nvcc_wrapper: default_arch sm_90")
print("gpu-kit-patch: " + "; ".join(done))
