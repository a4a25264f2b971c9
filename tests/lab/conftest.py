"""Fixtures of the lab's tests: a stub trainer and quick plots (`lab_stubs`)."""
import pytest

from gradlab.lab import view
from gradlab.studies.runs import experiments

from lab_stubs import drawn, stub_train


@pytest.fixture
def stub(monkeypatch):
    """Every run of the lab trains on `stub_train`; the configs trained, in order."""
    trained = []

    def train(config, *args):
        trained.append(config)
        return stub_train(config, *args)
    monkeypatch.setattr(experiments, "train", train)
    return trained


@pytest.fixture
def quick_plots(monkeypatch):
    """The lab's plots as `lab_stubs.drawn` bytes, not PNGs."""
    monkeypatch.setattr(view, "_png", lambda fig, dpi=72: drawn(fig))
