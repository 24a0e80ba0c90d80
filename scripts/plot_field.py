#!/usr/bin/python3
"""Turn isostencil field output into PNG frames (one per output step).

    scripts/plot_field.py output/default.h5            # every step, every field
    scripts/plot_field.py output/life_2d_gun.xmf --out frames --steps last
    scripts/plot_field.py output/jacobi_3d_7pt.h5 --field u --slice 20

Reads either the HDF5 file `isostencil run` writes (/step_NNNNNN/<field>) or
its XDMF description (following the XDMF DataItem references into the HDF5
file, as ParaView does; so a frame from the .xmf also shows that the XDMF file
is consistent). 2-D fields are drawn as they are (dimension 0 down, dimension
1 across, as the RLE patterns and the HDF5 datasets are laid out); fields
with more dimensions are cut through the middle (or --slice) of every
dimension but the last two. Colour scales are fixed over all frames of a
field so the frames make a movie. Frames go to --out (default: beside the
input, in <name>_frames/) as <name>_<field>_<step>.png; the script prints one
line per frame.

Uses Debian's python3-h5py and python3-matplotlib (scripts/setup.sh installs
them); hence /usr/bin/python3 rather than whatever python3 is first on PATH.
"""
import argparse
import os
import sys
import xml.etree.ElementTree as ElementTree

try:
    import h5py
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as error:  # pragma: no cover - depends on the machine
    sys.exit(f"plot_field.py: {error}; install python3-h5py and python3-matplotlib "
             "(scripts/setup.sh does)")


def frames_from_h5(path):
    """[(step, time, field, dataset path, h5 file)] from the HDF5 layout."""
    frames = []
    with h5py.File(path, "r") as h5:
        for group_name in sorted(h5.keys()):
            if not group_name.startswith("step_"):
                continue
            group = h5[group_name]
            step = int(group.attrs.get("step", int(group_name[5:])))
            time = float(group.attrs.get("time", step))
            for field in sorted(group.keys()):
                frames.append((step, time, field, f"/{group_name}/{field}", path))
    return frames


def frames_from_xdmf(path):
    """The same from an XDMF temporal collection (references resolved
    relative to the XDMF file)."""
    frames = []
    base = os.path.dirname(os.path.abspath(path))
    root = ElementTree.parse(path).getroot()
    for grid in root.iter("Grid"):
        if grid.get("GridType") != "Uniform":
            continue
        time_node = grid.find("Time")
        time = float(time_node.get("Value")) if time_node is not None else 0.0
        name = grid.get("Name", "")
        step = int(name[5:]) if name.startswith("step_") else len(frames)
        for attribute in grid.findall("Attribute"):
            item = attribute.find("DataItem")
            if item is None or item.get("Format") != "HDF":
                continue
            file_name, dataset = item.text.strip().split(":", 1)
            h5_path = os.path.join(base, file_name)
            with h5py.File(h5_path, "r") as h5:
                shape = tuple(h5[dataset].shape)
            declared = tuple(int(n) for n in item.get("Dimensions").split())
            if shape != declared:
                sys.exit(f"plot_field.py: {path}: {dataset} has shape {shape}, "
                         f"the XDMF file declares {declared}")
            frames.append((step, time, attribute.get("Name"), dataset, h5_path))
    return frames


def plane(data, cut):
    """A 2-D plane of an n-D array: `cut` (or the middle) in every dimension
    but the last two; 1-D data becomes one row."""
    if data.ndim == 1:
        return data[np.newaxis, :], ""
    index, where = [], []
    for j in range(data.ndim - 2):
        i = data.shape[j] // 2 if cut is None else min(cut, data.shape[j] - 1)
        index.append(i)
        where.append(f"x{j}={i}")
    return data[tuple(index)], (" at " + ", ".join(where)) if where else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", help="an isostencil .h5 output file or its .xmf description")
    parser.add_argument("--out", help="directory for the PNG frames (default: <name>_frames beside the input)")
    parser.add_argument("--field", action="append", help="only this field (repeatable)")
    parser.add_argument("--steps", default="all", help="all, last, or a comma-separated list of steps")
    parser.add_argument("--slice", type=int, help="index of the cut in dimensions beyond the last two")
    parser.add_argument("--dpi", type=int, default=100)
    args = parser.parse_args()

    if not os.path.exists(args.input):
        sys.exit(f"plot_field.py: {args.input}: no such file")
    frames = frames_from_xdmf(args.input) if args.input.endswith((".xmf", ".xdmf")) else frames_from_h5(args.input)
    if args.field:
        frames = [f for f in frames if f[2] in args.field]
    if not frames:
        sys.exit(f"plot_field.py: {args.input}: no output steps found")
    steps = sorted({f[0] for f in frames})
    if args.steps == "last":
        wanted = {steps[-1]}
    elif args.steps == "all":
        wanted = set(steps)
    else:
        wanted = {int(s) for s in args.steps.split(",") if s}
    frames = [f for f in frames if f[0] in wanted]

    name = os.path.splitext(os.path.basename(args.input))[0]
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.input)), name + "_frames")
    os.makedirs(out, exist_ok=True)

    # One colour scale per field over all its frames.
    planes = {}
    for step, time, field, dataset, h5_path in frames:
        with h5py.File(h5_path, "r") as h5:
            data = h5[dataset][...]
        planes[(step, field)] = plane(data, args.slice) + (data.dtype, time)
    limits = {}
    for (step, field), (values, _, _, _) in planes.items():
        low, high = float(values.min()), float(values.max())
        old = limits.get(field, (low, high))
        limits[field] = (min(old[0], low), max(old[1], high))

    for (step, field), (values, where, dtype, time) in sorted(planes.items()):
        low, high = limits[field]
        if high <= low:
            high = low + 1.0
        figure, axes = plt.subplots(figsize=(6.4, 6.4 * min(2.0, max(0.25, values.shape[0] / values.shape[1]))))
        boolean = dtype == np.uint8
        image = axes.imshow(values, cmap="Greys" if boolean else "viridis", vmin=0 if boolean else low,
                            vmax=1 if boolean else high, interpolation="nearest", origin="upper")
        if not boolean:
            figure.colorbar(image, ax=axes, shrink=0.8)
        axes.set_title(f"{name}: {field}, step {step} (t = {time:g}){where}")
        axes.set_xlabel(f"dimension {values.ndim - 1 if values.ndim > 1 else 0}")
        axes.set_ylabel("dimension 0" if values.shape[0] > 1 else "")
        path = os.path.join(out, f"{name}_{field}_{step:06d}.png")
        figure.savefig(path, dpi=args.dpi, bbox_inches="tight")
        plt.close(figure)
        print(f"{path}: {field} step {step}, {values.shape[0]}x{values.shape[1]}{where}, "
              f"range [{values.min():.6g}, {values.max():.6g}]")


if __name__ == "__main__":
    main()
