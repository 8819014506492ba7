"""``python -m skillpack``: the same process as the `skillpack` console script."""

from skillpack.cli import run

if __name__ == "__main__":
    run()
