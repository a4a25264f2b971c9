"""When a face checks the contract (gradlab/training/check_state.py): armed, held, refused."""
import pytest

from gradlab.training.check_state import CheckState


def test_first_checks_the_first_update_after_arming_and_every_checks_each():
    first, every = CheckState("first"), CheckState("every")
    for check in (first, every):
        check.arm(passes=1)  # one forward pass: nothing is split, nothing to check
        assert not check.checking and not bool(check.now.numpy())
        check.arm(passes=4)
        assert check.checking and bool(check.now.numpy())
        check.after()  # the armed update held
        assert check.checked
    assert not first.checking and not bool(first.now.numpy())
    assert every.checking and bool(every.now.numpy())


def test_train_on_batch_arms_only_until_an_update_was_checked_since_compile():
    check = CheckState("first")
    check.arm(4, again=False)
    check.after()
    check.arm(4, again=False)  # checked since compile: not again
    assert not check.checking
    check.forget()  # a new compile
    check.arm(4, again=False)
    assert check.checking


def test_a_refusal_is_read_once_and_keeps_the_check_armed():
    check = CheckState("first")
    assert not check.take_refused()  # not armed: no variable read
    check.arm(4)
    check.refused.assign(True)  # what the update records when the contract broke
    assert check.take_refused()
    assert not check.take_refused() and check.checking and not check.checked
    check.arm(4)
    assert not bool(check.refused.numpy())


def test_an_unknown_policy_is_refused_naming_it():
    with pytest.raises(ValueError, match="'sometimes'"):
        CheckState("sometimes")
