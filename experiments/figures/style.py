"""Shared look of every figure, and saving as PDF + PNG into figures/."""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
OUT = os.path.join(ROOT, "figures")
# figures read only the cells of one profile's config (ntkgap.runner.results)
os.environ.setdefault("NTKGAP_PROFILE", "quick")
COLORS = {"ntk": "#c0392b", "theory": "#e67e22", "net": "#2471a3", "tree": "#27ae60", "exact": "#000000"}

plt.rcParams.update({"figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3, "font.size": 9,
                     "legend.fontsize": 7, "axes.titlesize": 9, "savefig.bbox": "tight"})


def save(fig, name):
    os.makedirs(OUT, exist_ok=True)
    for ext in ("pdf", "png"):
        fig.savefig(os.path.join(OUT, f"{name}.{ext}"))
    plt.close(fig)


def no_data(ax, what):
    ax.text(0.5, 0.5, f"no results for {what}\n(run make figures)", ha="center", va="center",
            transform=ax.transAxes)
