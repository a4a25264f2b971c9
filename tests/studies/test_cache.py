"""The on-disk result cache: keys, atomic writes, corrupt entries, the version in the key."""
import json
import os
from pathlib import Path

import numpy as np
import pytest

import gradlab
from gradlab.studies import cache
from gradlab.studies.cache import ResultCache, cache_key

CONFIG = {"kind": "run", "accum_steps": 5, "micro_batch": 20, "lr": 0.5}
RESULT = {"accuracy": 0.95, "losses": [2.3, 1.1, 0.7]}


def files(root):
    return sorted(p.relative_to(root).as_posix() for p in Path(root).rglob("*") if p.is_file())


def test_key_is_the_canonical_json_of_config_and_version(monkeypatch):
    reordered = dict(reversed(list(CONFIG.items())))
    assert cache_key(CONFIG) == cache_key(reordered)
    assert cache_key(CONFIG) != cache_key({**CONFIG, "lr": 0.25})
    assert len(cache_key(CONFIG)) == 64
    before = cache_key(CONFIG)
    monkeypatch.setattr(gradlab, "__version__", "99.0.0")
    assert cache_key(CONFIG) != before  # a new version never reads old entries
    assert cache_key(CONFIG) == cache_key(CONFIG, version="99.0.0")


def test_put_then_get_round_trips_and_a_miss_is_none(tmp_path):
    store = ResultCache(tmp_path)
    assert store.get(CONFIG) is None
    path = store.put(CONFIG, RESULT)
    key = cache_key(CONFIG)
    assert path == tmp_path / key[:2] / f"{key}.json"
    assert files(tmp_path) == [f"{key[:2]}/{key}.json"]
    assert store.get(CONFIG) == RESULT
    assert ResultCache(tmp_path).get({**CONFIG, "lr": 0.25}) is None
    assert json.loads(path.read_text())["config"] == CONFIG


def test_root_from_environment_else_the_users_cache_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("GRADLAB_CACHE", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ResultCache().root == tmp_path / "elsewhere"
    monkeypatch.setenv("GRADLAB_CACHE", "")  # empty counts as unset
    assert cache.cache_root() == tmp_path / "xdg" / "gradlab"
    monkeypatch.delenv("GRADLAB_CACHE")
    assert cache.cache_root() == tmp_path / "xdg" / "gradlab"
    # The XDG rule ignores a relative XDG_CACHE_HOME; never beside the package either way.
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_root() == tmp_path / "home" / ".cache" / "gradlab"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.cache_root() == tmp_path / "home" / ".cache" / "gradlab"
    assert Path(gradlab.__file__).resolve().parent not in cache.cache_root().parents


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_an_interrupted_write_leaves_no_entry_and_no_temp_file(tmp_path, monkeypatch, failing):
    store = ResultCache(tmp_path)
    store.put({"other": 1}, {"kept": True})
    before = files(tmp_path)

    def interrupt(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(os, failing, interrupt)
    with pytest.raises(KeyboardInterrupt):
        store.put(CONFIG, RESULT)
    monkeypatch.undo()
    assert files(tmp_path) == before
    assert store.get(CONFIG) is None and store.get({"other": 1}) == {"kept": True}


@pytest.mark.parametrize("content", [
    '{"key": "trunc',                          # half-written by something else
    "not json at all",
    '{"key": "KEY", "config": {"kind": "other"}, "result": {}}',  # someone else's entry
    '["a", "list"]',
])
def test_a_corrupt_entry_is_reported_discarded_and_recomputable(tmp_path, content):
    store = ResultCache(tmp_path)
    path = store.put(CONFIG, RESULT)
    path.write_text(content.replace("KEY", path.stem))
    with pytest.warns(RuntimeWarning, match=path.name):
        assert store.get(CONFIG) is None
    assert not path.exists()
    store.put(CONFIG, RESULT)
    assert store.get(CONFIG) == RESULT


def test_an_entry_that_is_not_utf8_is_reported_and_discarded(tmp_path):
    store = ResultCache(tmp_path)
    path = store.put(CONFIG, RESULT)
    path.write_bytes(b"\xff\xfe not UTF-8")
    with pytest.warns(RuntimeWarning, match="UnicodeDecodeError"):
        assert store.get(CONFIG) is None
    assert not path.exists()


def test_entries_are_readable_by_others_sharing_the_cache(tmp_path):
    path = ResultCache(tmp_path).put(CONFIG, RESULT)
    assert path.stat().st_mode & 0o777 == 0o644


def test_an_unreadable_entry_is_reported_not_raised(tmp_path):
    store = ResultCache(tmp_path)
    path = store.put(CONFIG, RESULT)
    path.unlink()
    path.mkdir()  # reading a directory raises IsADirectoryError, an OSError
    with pytest.warns(RuntimeWarning, match="IsADirectoryError"):
        assert store.get(CONFIG) is None


def test_disabled_cache_neither_reads_nor_writes(tmp_path):
    ResultCache(tmp_path).put(CONFIG, RESULT)
    before = files(tmp_path)
    off = ResultCache(tmp_path, enabled=False)
    assert off.get(CONFIG) is None
    assert off.put({"new": 1}, RESULT) is None
    assert files(tmp_path) == before


def test_jsonable_and_bad_arguments():
    value = {"a": np.float32(0.5), "b": np.arange(3), "c": (1, float("nan")), 4: np.int64(7)}
    assert cache.jsonable(value) == {"a": 0.5, "b": [0, 1, 2], "c": [1, None], "4": 7}
    with pytest.raises(TypeError, match="config must be a dict of JSON values, got list"):
        cache_key([1, 2])
    with pytest.raises(TypeError, match="root must be a path or None, got 3"):
        ResultCache(3)
    with pytest.raises(ValueError):  # NaN has no canonical JSON spelling
        cache_key({"lr": float("nan")})


def test_a_cache_that_cannot_be_written_is_named_before_any_work(tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)  # what a committed symlink to a missing cache gave a clean clone
    with pytest.raises(OSError, match=r"result cache '.*loop' cannot be written \(.*Error"):
        ResultCache(loop).check_writable()
    ResultCache(loop, enabled=False).check_writable()  # off: never touched
    ResultCache(tmp_path / "new" / "dir").check_writable()
    assert (tmp_path / "new" / "dir").is_dir() and files(tmp_path / "new") == []
