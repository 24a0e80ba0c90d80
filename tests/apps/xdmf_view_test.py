#!/usr/bin/python3
"""Checks an isostencil XDMF series the way a visualisation client reads it.

    xdmf_view_test.py FILE.xmf --extent 24,16 --fields u --steps 3 [--png out.png]

With ParaView's pvpython (run this script under pvpython, or have pvpython
or pvbatch on PATH: the script then re-runs itself under it), the XDMF file is opened with
ParaView's readers, offscreen: bounds, cell arrays and time steps are checked
and the last step is rendered to --png. Without it, the same checks are made
on the XML and the HDF5 file (h5py), reading the mesh as ParaView's XDMF
readers do: topology dimensions slowest first (Z Y X), a mesh of fewer than 3
dimensions padded with a single node on the right, i.e. in X (ParaView's
legacy XDMF reader). The script prints which path ran.

Expected: for an extent n0 x n1 the X axis spans [0, n1] and Y [0, n0], Z
[0, 1] (2-D output in the X-Y plane, one cell thick); for n0 x n1 x n2 X
spans [0, n2], Y [0, n1], Z [0, n0].
"""
import argparse
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree


def expected_bounds(extent):
    """(xmin, xmax, ymin, ymax, zmin, zmax): the last dimension is X; a 2-D
    grid is one cell thick in Z."""
    axes = list(reversed(extent)) + [1] * (3 - len(extent))
    return (0.0, float(axes[0]), 0.0, float(axes[1]), 0.0, float(axes[2]))


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


def check_bounds(got, extent, what):
    want = expected_bounds(extent)
    if any(abs(a - b) > 1e-9 for a, b in zip(got, want)):
        fail(f"{what}: bounds {tuple(got)}, expected {want} (extent {extent}: the last "
             "dimension along X, 2-D in the X-Y plane)")
    print(f"ok: {what}: bounds {tuple(got)}")


# --- h5py + XML ------------------------------------------------------------------

def xml_view(path, extent, fields, steps):
    import h5py
    base = os.path.dirname(os.path.abspath(path))
    root = ElementTree.parse(path).getroot()
    grids = [g for g in root.iter("Grid") if g.get("GridType") == "Uniform"]
    if len(grids) != steps:
        fail(f"{len(grids)} time steps, expected {steps}")
    print(f"ok: {steps} time steps")
    times = []
    for grid in grids:
        name = grid.get("Name")
        times.append(float(grid.find("Time").get("Value")))
        topology = grid.find("Topology")
        kind = topology.get("TopologyType")
        if not kind.endswith("CoRectMesh"):
            fail(f"{name}: topology {kind}, expected a CoRectMesh")
        nodes = [int(n) for n in topology.get("Dimensions").split()]
        if int(kind[0]) != len(nodes):
            fail(f"{name}: {kind} with {len(nodes)} dimensions")
        geometry = grid.find("Geometry")
        items = geometry.findall("DataItem")
        origin = [float(v) for v in items[0].text.split()]
        spacing = [float(v) for v in items[1].text.split()]
        if not (len(origin) == len(spacing) == len(nodes)):
            fail(f"{name}: origin {origin} and spacing {spacing} for {len(nodes)} dimensions")
        # As the reader does: Z Y X, padded on the right (X) with one node.
        padded = lambda values, fill: values + [fill] * (3 - len(values))
        nodes, origin, spacing = padded(nodes, 1), padded(origin, 0.0), padded(spacing, 1.0)
        bounds = []
        for axis in (2, 1, 0):  # X, Y, Z
            bounds += [origin[axis], origin[axis] + spacing[axis] * (nodes[axis] - 1)]
        check_bounds(bounds, extent, f"{name} (XML)")
        cells = 1
        for n in nodes:
            cells *= max(n - 1, 1)
        names = []
        for attribute in grid.findall("Attribute"):
            if attribute.get("Center") != "Cell":
                fail(f"{name}: {attribute.get('Name')} is not cell-centred")
            item = attribute.find("DataItem")
            file_name, dataset = item.text.strip().split(":", 1)
            declared = [int(n) for n in item.get("Dimensions").split()]
            with h5py.File(os.path.join(base, file_name), "r") as h5:
                shape = list(h5[dataset].shape)
            # A 2-D dataset n0 x n1 is declared 1 x n0 x n1 (one cell in Z).
            squeezed = declared[len(declared) - len(shape):] if len(declared) > len(shape) else declared
            if shape != list(extent) or squeezed != shape or any(n != 1 for n in declared[:-len(shape)]):
                fail(f"{name}: {dataset} has shape {shape}, declared {declared}, extent {extent}")
            size = 1
            for n in shape:
                size *= n
            if size != cells:
                fail(f"{name}: {dataset} has {size} values for {cells} cells")
            names.append(attribute.get("Name"))
        if sorted(names) != sorted(fields):
            fail(f"{name}: arrays {names}, expected {fields}")
    if times != sorted(times):
        fail(f"times not increasing: {times}")
    print(f"ok: arrays {fields} on {cells} cells at every step")


# --- pvpython -----------------------------------------------------------------

def paraview_view(path, extent, fields, steps, png):
    import paraview.simple as pv
    legacy, legacy_time = None, 0.0
    for reader_name in ("XDMFReader", "Xdmf3ReaderS"):
        if not hasattr(pv, reader_name):
            print(f"note: this ParaView has no {reader_name}")
            continue
        # The two readers name their file property differently.
        reader = pv.Xdmf3ReaderS(FileName=[path]) if reader_name == "Xdmf3ReaderS" \
            else pv.XDMFReader(FileNames=[path])
        reader.UpdatePipelineInformation()
        times = list(reader.TimestepValues) if reader.TimestepValues else []
        if len(times) != steps:
            fail(f"{reader_name}: {len(times)} time steps {times}, expected {steps}")
        print(f"ok: {reader_name}: {steps} time steps")
        reader.UpdatePipeline(times[-1])
        info = reader.GetDataInformation()
        check_bounds(info.GetBounds(), extent, reader_name)
        names = sorted(reader.CellData.keys())
        if names != sorted(fields):
            fail(f"{reader_name}: cell arrays {names}, expected {sorted(fields)}")
        cells = 1
        for n in extent:
            cells *= n
        if info.GetNumberOfCells() != cells:
            fail(f"{reader_name}: {info.GetNumberOfCells()} cells, expected {cells}")
        print(f"ok: {reader_name}: cell arrays {names}, {cells} cells")
        if reader_name == "XDMFReader":
            legacy, legacy_time = reader, times[-1]
            continue
        pv.Delete(reader)
    # The picture of the last step through ParaView's default (legacy) XDMF
    # reader, in the default camera.
    if png and legacy is not None:
        view = pv.CreateView("RenderView")
        view.ViewSize = [640, 480]
        view.ViewTime = legacy_time
        display = pv.Show(legacy, view)
        pv.ColorBy(display, ("CELLS", sorted(fields)[0]))
        display.RescaleTransferFunctionToDataRange(True, False)
        display.SetScalarBarVisibility(view, True)
        display.SetRepresentationType("Surface")
        view.ResetCamera()
        pv.SaveScreenshot(png, view, ImageResolution=[640, 480])
        print(f"rendered {png} (ParaView's default camera, looking down -Z)")


def run_under_paraview(pvpython, args):
    """Re-runs this script under pvpython. Rendering needs an X display:
    the one there is, else an Xvfb of our own for the run; with neither the
    readers are checked and nothing is rendered."""
    command = [pvpython, os.path.abspath(__file__)] + sys.argv[1:]
    environment = dict(os.environ, ISOSTENCIL_XDMF_UNDER_PVPYTHON="1")
    server = None
    if not environment.get("DISPLAY") and args.png:
        xvfb = shutil.which("Xvfb")
        if xvfb:
            number = 100 + os.getpid() % 400
            while os.path.exists(f"/tmp/.X11-unix/X{number}") or os.path.exists(f"/tmp/.X{number}-lock"):
                number += 1
            server = subprocess.Popen([xvfb, f":{number}", "-screen", "0", "1024x768x24", "+extension", "GLX", "-nolisten", "tcp", "-noreset"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # Ready once its socket is there (seconds on a loaded machine).
            for _ in range(100):
                if os.path.exists(f"/tmp/.X11-unix/X{number}") or server.poll() is not None:
                    break
                time.sleep(0.2)
            time.sleep(1)
            environment["DISPLAY"] = f":{number}"
        else:
            print("note: no X display and no Xvfb: ParaView's readers are checked, nothing rendered")
            command = [c for c in command if c != args.png and c != "--png"]
    try:
        return subprocess.call(command, env=environment)
    finally:
        if server is not None:
            server.terminate()
            server.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("xmf")
    parser.add_argument("--extent", required=True)
    parser.add_argument("--fields", required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--png")
    parser.add_argument("--no-paraview", action="store_true", help="the h5py + XML path only")
    args = parser.parse_args()
    extent = [int(n) for n in args.extent.split(",")]
    fields = args.fields.split(",")
    # The ParaView path runs under pvpython only (this script re-runs itself
    # there): Debian's python3-paraview also imports in plain python3, where
    # rendering crashes.
    if os.environ.get("ISOSTENCIL_XDMF_UNDER_PVPYTHON") == "1":
        print("path: pvpython (ParaView's XDMF readers, offscreen)")
        paraview_view(os.path.abspath(args.xmf), extent, fields, args.steps, args.png)
        print("PASSED")
        # Skip ParaView's teardown: on Xvfb its GL context release fails
        # (GLXBadContext) after the work is done.
        sys.stdout.flush()
        os._exit(0)
    else:
        pvpython = shutil.which("pvpython") or shutil.which("pvbatch")
        if pvpython and not args.no_paraview and os.environ.get("ISOSTENCIL_NO_PVPYTHON") != "1":
            rc = run_under_paraview(pvpython, args)
            if rc != 0:
                sys.exit(rc)
            print("path: h5py + XML as well")
        else:
            print("path: h5py + XML (no pvpython: apt-get install paraview for the reader check)")
        xml_view(args.xmf, extent, fields, args.steps)
    print("PASSED")


if __name__ == "__main__":
    main()
