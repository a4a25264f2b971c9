"""gradlab.studies._paths: the XDG rule for the per-user directories, and environment overrides."""
from pathlib import Path

import pytest

from gradlab.studies._paths import env_path, user_dir


def test_env_path_is_none_when_unset_or_empty_and_expands_the_home(monkeypatch):
    monkeypatch.delenv("GRADLAB_TEST_DIR", raising=False)
    assert env_path("GRADLAB_TEST_DIR") is None
    monkeypatch.setenv("GRADLAB_TEST_DIR", "")
    assert env_path("GRADLAB_TEST_DIR") is None
    monkeypatch.setenv("GRADLAB_TEST_DIR", "~/x")
    assert env_path("GRADLAB_TEST_DIR") == Path.home() / "x"


@pytest.mark.parametrize("variable, default", [("XDG_CACHE_HOME", ".cache"),
                                               ("XDG_DATA_HOME", ".local/share")])
def test_user_dir_follows_xdg_and_ignores_relative_paths(monkeypatch, tmp_path, variable, default):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(variable, str(tmp_path / "xdg"))
    assert user_dir(variable) == tmp_path / "xdg" / "gradlab"
    for unusable in ("", "not/absolute"):
        monkeypatch.setenv(variable, unusable)
        assert user_dir(variable) == tmp_path / default / "gradlab"


def test_user_dir_names_a_bad_variable():
    with pytest.raises(ValueError, match="'XDG_CONFIG_HOME'"):
        user_dir("XDG_CONFIG_HOME")
