"""gradlab.studies.arguments: the command line's argparse types refuse bad text, naming it."""
import argparse

import pytest

from gradlab.studies.arguments import parse_counts, positive


def test_counts_parse_and_bad_text_is_named():
    assert parse_counts("1,5,10") == [1, 5, 10]
    assert parse_counts("4,") == [4]
    for text in ("1,x", "", "0,2", "-1"):
        with pytest.raises(argparse.ArgumentTypeError, match=repr(text).replace("-", "\\-")):
            parse_counts(text)


def test_positive_numbers_parse_and_others_are_named():
    assert positive(float)("0.5") == 0.5 and positive(int)("3") == 3
    for kind, text in ((float, "0"), (int, "2.5"), (float, "nan?")):
        with pytest.raises(argparse.ArgumentTypeError, match=repr(text).replace("?", "\\?")):
            positive(kind)(text)
