"""The argparse types of the command line: counts lists and positive numbers, refused naming the text.

Lesson: notebooks/17-the-lab.ipynb
"""
import argparse


def parse_counts(text):
    """`"1,5,10"` -> `[1, 5, 10]`: the `--accum`/`--sweep` lists of the command line (an
    `argparse` type: bad text is an ArgumentTypeError that names it)."""
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers like 1,5,10,20, "
                                         f"got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers like 1,5,10,20, got {text!r}")
    return values


def positive(kind):
    """An `argparse` type: `kind(text)`, refused (naming the text) unless it is positive."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {kind.__name__}, got {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return value
    return parse
