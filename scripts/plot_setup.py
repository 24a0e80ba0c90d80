"""matplotlib for the plotting scripts (plot_depth.py, plot_smpi.py).

pyplot(name) returns matplotlib.pyplot on the Agg backend. When the python3
on PATH lacks matplotlib (a virtual environment, say), the calling script is
re-run with /usr/bin/python3, where Debian's python3-matplotlib lives.
"""

import os
import sys


def pyplot(name):
    try:
        import matplotlib
    except ImportError:
        system = "/usr/bin/python3"
        if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system):
            os.execv(system, [system] + sys.argv)
        sys.exit(f"{name}: needs matplotlib (apt-get install python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt
