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
dimension but the last two, which are drawn (dimension n-2 down, n-1 across;
the axes say which). Colour scales are fixed over all frames of a
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
            # A 2-D field n0 x n1 is declared 1 x n0 x n1 (a mesh one cell
            # thick in Z, so that ParaView shows it in the X-Y plane).
            leading = declared[:len(declared) - len(shape)]
            if declared[len(declared) - len(shape):] != shape or any(n != 1 for n in leading):
                sys.exit(f"plot_field.py: {path}: {dataset} has shape {shape}, "
                         f"the XDMF file declares {declared}")
            frames.append((step, time, attribute.get("Name"), dataset, h5_path))
    return frames


def plane(data, cut):
    """A 2-D plane of an n-D array: `cut` (or the middle) in every dimension
    but the last two; 1-D data becomes one row. Also the dimensions the
    plane shows: (down, across), down None for 1-D data."""
    if data.ndim == 1:
        return data[np.newaxis, :], "", (None, 0)
    index, where = [], []
    for j in range(data.ndim - 2):
        i = data.shape[j] // 2 if cut is None else min(cut, data.shape[j] - 1)
        index.append(i)
        where.append(f"x{j}={i}")
    return data[tuple(index)], (" at " + ", ".join(where)) if where else "", (data.ndim - 2, data.ndim - 1)


def draw(values, axes_dims, title, boolean, low, high):
    """The figure of one frame: the plane drawn as it is stored (its first
    dimension down), axes named after the dimensions the plane shows, and a
    colour bar as tall as the image with plain tick values (no offset or
    power written apart from the numbers)."""
    from mpl_toolkits.axes_grid1 import make_axes_locatable
    from matplotlib.ticker import ScalarFormatter

    figure, axes = plt.subplots(figsize=(6.4, 6.4 * min(2.0, max(0.25, values.shape[0] / values.shape[1]))))
    image = axes.imshow(values, cmap="Greys" if boolean else "viridis", vmin=0 if boolean else low,
                        vmax=1 if boolean else high, interpolation="nearest", origin="upper")
    if not boolean:
        bar_axes = make_axes_locatable(axes).append_axes("right", size="4%", pad=0.1)
        formatter = ScalarFormatter(useOffset=False)
        formatter.set_scientific(False)
        if 0 < max(abs(low), abs(high)) < 1e-3 or max(abs(low), abs(high)) >= 1e5:
            formatter = matplotlib.ticker.FormatStrFormatter("%.4g")
        figure.colorbar(image, cax=bar_axes, format=formatter)
    axes.set_title(title)
    down, across = axes_dims
    axes.set_xlabel(f"dimension {across}")
    axes.set_ylabel(f"dimension {down}" if down is not None else "")
    return figure


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
    for (step, field), (values, _, _, _, _) in planes.items():
        low, high = float(values.min()), float(values.max())
        old = limits.get(field, (low, high))
        limits[field] = (min(old[0], low), max(old[1], high))

    for (step, field), (values, where, axes_dims, dtype, time) in sorted(planes.items()):
        low, high = limits[field]
        if high <= low:
            high = low + 1.0
        title = f"{name}: {field}, step {step} (t = {time:g}){where}"
        figure = draw(values, axes_dims, title, dtype == np.uint8, low, high)
        path = os.path.join(out, f"{name}_{field}_{step:06d}.png")
        figure.savefig(path, dpi=args.dpi, bbox_inches="tight")
        plt.close(figure)
        down, across = axes_dims
        print(f"{path}: {field} step {step}, {values.shape[0]}x{values.shape[1]}{where}, "
              f"range [{values.min():.6g}, {values.max():.6g}]"
              + (f" (dimension {down} down, {across} across)" if down is not None else ""))


if __name__ == "__main__":
    main()
