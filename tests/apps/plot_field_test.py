#!/usr/bin/python3
"""scripts/plot_field.py on 2-D, 3-D and 4-D fields: each frame's axes name
the dimensions the plane shows (the last two of the field), and the colour
bar is as tall as the image with its tick values written out (no offset such
as "+1" printed apart from them, which made a field of values near 1 read
as near 0).

    plot_field_test.py PLOT_FIELD_PY WORK_DIR
"""
import os
import runpy
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.figure  # noqa: E402
import numpy as np  # noqa: E402

plot, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
shapes = {"f2": (5, 7), "f3": (6, 5, 4), "f4": (3, 4, 5, 6)}
path = os.path.join(work, "fields.h5")
with h5py.File(path, "w") as h5:
    group = h5.create_group("step_000000")
    group.attrs["step"], group.attrs["time"] = 0, 0.0
    for name, shape in shapes.items():
        # Values near 1 that differ in the sixth digit: an offset formatter's case.
        group[name] = 1.0 + 1e-6 * np.arange(np.prod(shape), dtype=float).reshape(shape)

seen = {}
original_savefig = matplotlib.figure.Figure.savefig


def recording_savefig(self, file_name, *args, **kwargs):
    self.canvas.draw()
    image_axes = [a for a in self.axes if a.images]
    others = [a for a in self.axes if not a.images]
    field = os.path.basename(str(file_name)).split("_")[1]
    entry = {"x": image_axes[0].get_xlabel(), "y": image_axes[0].get_ylabel()}
    if others:
        bar = others[0]
        entry["offset"] = bar.yaxis.get_offset_text().get_text()
        entry["ticks"] = [t.get_text() for t in bar.get_yticklabels() if t.get_text()]
        image_height = image_axes[0].get_window_extent().height
        entry["height_ratio"] = bar.get_window_extent().height / image_height
    seen[field] = entry
    return original_savefig(self, file_name, *args, **kwargs)


matplotlib.figure.Figure.savefig = recording_savefig
sys.argv = [plot, path, "--out", os.path.join(work, "frames")]
runpy.run_path(plot, run_name="__main__")

failures = []
expected = {"f2": ("dimension 1", "dimension 0"), "f3": ("dimension 2", "dimension 1"),
            "f4": ("dimension 3", "dimension 2")}
for field, (x, y) in expected.items():
    entry = seen.get(field)
    if entry is None:
        failures.append(f"{field}: no frame drawn")
        continue
    print(f"{field}: {entry}")
    if (entry["x"], entry["y"]) != (x, y):
        failures.append(f"{field}: axes labelled {entry['x']!r} across, {entry['y']!r} down; "
                        f"expected {x!r}, {y!r}")
    if entry.get("offset"):
        failures.append(f"{field}: colour bar offset {entry['offset']!r} printed apart from the ticks")
    if not entry.get("ticks") or not all(t.startswith("1.0") for t in entry["ticks"]):
        failures.append(f"{field}: colour bar ticks {entry.get('ticks')} do not read as values near 1")
    if not 0.97 <= entry.get("height_ratio", 0) <= 1.03:
        failures.append(f"{field}: colour bar {entry.get('height_ratio', 0):.2f} times the image's height")
if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("PASSED")
