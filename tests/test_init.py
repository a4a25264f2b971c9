"""`import gradlab` changes nothing global; its public names are there when first used."""
import json
import subprocess
import sys

PROBE = """
import json, logging, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "1"
import tensorflow as tf
tf.get_logger().setLevel("INFO")
import gradlab as gl
gl.make_strategy, gl.AccumulatingModel, gl.average_gradients  # the public names, imported
print(json.dumps([os.environ["TF_CPP_MIN_LOG_LEVEL"], tf.get_logger().level,
                  os.environ.get("UNSET_BEFORE", "unset")]))
"""

FRESH = """
import json, os, sys
import gradlab
print(json.dumps(["tensorflow" in sys.modules, os.environ.get("TF_CPP_MIN_LOG_LEVEL")]))
"""


def _run(code):
    env = {k: v for k, v in __import__("os").environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_import_gradlab_leaves_tensorflows_logging_as_the_user_set_it():
    assert _run(PROBE) == ["1", 20, "unset"]  # 20: logging.INFO


def test_import_gradlab_alone_neither_imports_tensorflow_nor_sets_its_log_level():
    assert _run(FRESH) == [False, None]


def test_the_lessons_facade_quiets_tensorflow():
    code = ("import json, os, gradlab.lessons, tensorflow as tf; "
            "print(json.dumps([os.environ['TF_CPP_MIN_LOG_LEVEL'], tf.get_logger().level]))")
    assert _run(code) == ["3", 40]  # 40: logging.ERROR


def test_unknown_names_are_attribute_errors():
    import gradlab
    try:
        gradlab.no_such_name
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("no AttributeError")
