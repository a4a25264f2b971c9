import numpy as np
import pytest

from gradlab.studies.yardstick import EPS, as_miss, beyond, miss, spacings, verdict


def test_walk_through_by_hand():
    # b's largest entry is 0.5, where one float32 spacing is 2^-24 (0.5 = 2^-1, 23 mantissa bits).
    b = [np.array([0.5, -0.25], np.float32), np.array([0.125], np.float32)]
    a = [np.array([0.5 + 3 * 2.0 ** -24, -0.25], np.float32), np.array([0.125], np.float32)]
    assert spacings(a, b) == 3.0
    # miss: |a - b| = 3 * 2^-24; |b| = sqrt(0.25 + 0.0625 + 0.015625) = sqrt(0.328125)
    assert miss(a, b) == pytest.approx(3 * 2.0 ** -24 / np.sqrt(0.328125), rel=1e-12)
    assert verdict(a, b) == "exact: 3.0 spacings"


def test_a_miss_in_percent_and_in_eps():
    b = np.array([3.0, 4.0])  # |b| = 5
    assert as_miss(miss(np.array([3.0, 4.05]), b)) == "1%"
    assert verdict(np.array([3.0, 4.05]), b) == "miss 1%"
    assert as_miss(miss(np.array([3.0, 4.0 + 5 * 2.5 * EPS]), b)) == "2.5 eps"
    assert as_miss(0.681) == "68.1%" and as_miss(3.0) == "300%"
    assert as_miss(miss(b, b)) == "0 (bit-for-bit)" and as_miss(EPS / 100) == "0.0 eps"


def test_the_miss_of_an_update_read_off_weights():
    w0 = np.array([1.0, 1.0])
    # the updates are (0, -0.1) and (0, -0.2): the first misses the second by half
    assert miss(np.array([1.0, 0.9]), np.array([1.0, 0.8]), start=w0) == pytest.approx(0.5)
    # and the spacing is taken at the weights (1.0), not at the update
    assert spacings(np.float32(1.0) + np.float32(2 * 2.0 ** -23), np.float32(1.0)) == 2.0


def test_spacing_set_by_at():
    a, b = np.float32(1e-3), np.float32(1e-3) + np.float32(2.0 ** -23)
    assert spacings(a, b) > 1000  # at 1e-3 one spacing is about 1.2e-10
    assert spacings(a, b, at=np.float32(1.0)) == 1.0


def test_bad_input_named():
    with pytest.raises(ValueError, match="2 arrays and b has 1"):
        spacings([np.zeros(2), np.zeros(2)], [np.zeros(2)])
    with pytest.raises(ValueError, match=r"shape \(2,\) and b has shape \(3,\)"):
        miss(np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError, match="all zeros"):
        miss(np.ones(2), np.zeros(2))
    with pytest.raises(TypeError, match="got str"):
        verdict("w", np.zeros(2))
    with pytest.raises(ValueError, match="empty list"):
        spacings([], [])
    with pytest.raises(ValueError, match="got -1"):
        as_miss(-1)


def test_miss_means_past_rounding():
    # |b| = 5 and b's largest entry 4, where one spacing is 2^-21 = 4 eps: a gap of 5 * 8 eps is
    # 10 spacings (exact); 5 * 12 eps is 15 spacings and a miss of 12 eps, rounding-sized.
    b = np.array([3.0, 4.0])
    assert verdict(np.array([3.0, 4.0 + 5 * 8 * EPS]), b) == "exact: 10.0 spacings"
    assert verdict(np.array([3.0, 4.0 + 5 * 12 * EPS]), b) == "not exact: 15 spacings, 12.0 eps (rerun in float64)"
    # from 100 eps up it is a miss
    assert verdict(np.array([3.0, 4.0 + 5 * 200 * EPS]), b) == "miss 200.0 eps"
    assert beyond(11, 0.0107) == "miss 1.07%"


def test_bit_for_bit_is_said_only_when_every_entry_is_equal():
    # b's largest entry is 4.0 (spacing 2^-21); one ulp at the small entry 0.5 (2^-24) is 1/8 spacing
    b = np.array([0.5, 4.0], np.float32)
    assert verdict(b.copy(), b) == "exact: 0 spacings, bit for bit"
    assert verdict(np.array([np.nextafter(np.float32(0.5), np.float32(1))], np.float32), b[:1]) == "exact: 1.0 spacings"
    one_ulp_small = np.array([np.nextafter(np.float32(0.5), np.float32(1)), 4.0], np.float32)
    assert verdict(one_ulp_small, b) == "exact: 0.1 spacings"
    # at a still smaller entry (2^-10, spacing 2^-33) one ulp is 2^-12 spacings: never printed as "0.0"
    tiny = np.array([2.0 ** -10, 4.0], np.float32)
    assert verdict(np.array([np.nextafter(np.float32(2.0 ** -10), np.float32(1)), 4.0], np.float32), tiny) \
        == "exact: 0.0002 spacings"
